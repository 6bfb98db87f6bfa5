"""A host's encryption ceiling: AES-GCM and ChaCha20-Poly1305 throughput per core, measured with the
host's own crypto library (`openssl speed -evp`), at the transport's message size.

One SSH round trip runs a fixed script (the cipher names, seconds and message size arrive as positional
arguments, quoted by the transport). It runs `openssl speed -mr -seconds S -bytes N -evp CIPHER` for
each cipher: S seconds each (1 by default, so about 2 s of one core for the two ciphers), never more.
The script cuts what it passes on to 20 lines of 200 bytes per cipher, so a strange `openssl` cannot
flood the connection (SshTransport.run keeps all it is sent).
`-seconds` and `-bytes` came with OpenSSL 1.1.1; an older or a foreign `openssl` says so instead.

`openssl speed` divides by the CPU user time of its one process (not the wall clock), so its figure is
what one core encrypts per second: the ceiling of one transport stream (Oracle Net encrypts a
connection's packets in the one process that ships it). The host's ceiling is that x its online cores,
not measured in parallel (turbo, shared cores and the database's own load make it an upper bound).

Output of `-mr` (machine-readable, apps/speed.c in 1.1.1 and 3.x): `+H:N` then `+F:INDEX:NAME:BPS` on
standard output, BPS in bytes per second (3.x writes NAME as "AES-256-GCM", 1.1.1 as "aes-256-gcm");
the `+DT`/`+R` lines go to standard error, which is not read.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from redolab.remote.transport import Transport

CIPHERS = ("aes-256-gcm", "chacha20-poly1305")  # what TLS 1.3 and Oracle's native encryption offer
SECONDS_PER_CIPHER = 1
MAX_OUTPUT_LINES = 200  # what is read of the host's answer: the script prints about ten lines
MAX_OUTPUT_CHARS = 64 * 1024
MAX_TEXT = 200  # characters kept of the version line
MAX_BYTES_PER_SECOND = 1e13  # 10 TB/s per core: anything above is not a measurement
NO_OPENSSL = (
    "no openssl on this host: install the openssl package (Debian, Ubuntu, RHEL, SUSE: openssl) "
    "to measure what its crypto library encrypts"
)
TOO_OLD = "this openssl cannot time one message size (openssl speed -bytes needs OpenSSL 1.1.1 or later)"

SCRIPT = r"""
seconds="$1"; bytes="$2"; shift 2
echo "cores=$(getconf _NPROCESSORS_ONLN 2>/dev/null | head -n 1 | cut -c 1-12)"
if [ -r /proc/cpuinfo ]; then
  if grep -qw aes /proc/cpuinfo; then echo "aes_instructions=yes"; else echo "aes_instructions=no"; fi
fi
if ! command -v openssl >/dev/null 2>&1; then echo "openssl=missing"; exit 0; fi
echo "version=$(openssl version 2>/dev/null | head -n 1 | cut -c 1-200)"
for cipher in "$@"; do
  out=$(openssl speed -mr -seconds "$seconds" -bytes "$bytes" -evp "$cipher" 2>/dev/null)
  code=$?
  printf '%s\n' "$out" | head -n 20 | cut -c 1-200
  echo "status=$cipher:$code"
done
"""


@dataclass(frozen=True)
class CipherSpeed:
    cipher: str  # as redolab asked for it: "aes-256-gcm"
    bytes_per_second: float | None  # per core (CPU user time); None: not measured, see note
    note: str = ""

    def to_json(self) -> dict:
        return {"cipher": self.cipher, "bytes_per_second": self.bytes_per_second, "note": self.note}


@dataclass(frozen=True)
class CryptoSpeed:
    """What one host's crypto library encrypts per core at message_bytes, and with what."""

    message_bytes: int
    seconds_per_cipher: int
    library: str | None  # `openssl version`; None: no openssl on the host
    cores: int | None  # online cores (getconf _NPROCESSORS_ONLN)
    aes_instructions: bool | None  # the CPU's "aes" flag in /proc/cpuinfo (None: not Linux-readable)
    ciphers: tuple[CipherSpeed, ...] = ()

    @property
    def note(self) -> str:
        """Why nothing was measured ("" when something was)."""
        if self.library is None:
            return NO_OPENSSL
        if any(c.bytes_per_second for c in self.ciphers):
            return ""
        return next((c.note for c in self.ciphers if c.note), "openssl measured nothing")

    def to_json(self) -> dict:
        return {
            "message_bytes": self.message_bytes,
            "seconds_per_cipher": self.seconds_per_cipher,
            "library": self.library,
            "cores": self.cores,
            "aes_instructions": self.aes_instructions,
            "ciphers": [c.to_json() for c in self.ciphers],
        }

    @classmethod
    def from_json(cls, stored: dict) -> CryptoSpeed:
        return cls(
            message_bytes=int(stored["message_bytes"]),
            seconds_per_cipher=int(stored["seconds_per_cipher"]),
            library=stored.get("library"),
            cores=stored.get("cores"),
            aes_instructions=stored.get("aes_instructions"),
            ciphers=tuple(
                CipherSpeed(c["cipher"], c.get("bytes_per_second"), c.get("note", "")) for c in stored["ciphers"]
            ),
        )


def _printable(text: str) -> str:
    """A line a host printed, without control characters, cut to MAX_TEXT characters."""
    return "".join(ch for ch in text if ch.isprintable())[:MAX_TEXT].strip()


def speed_figure(line: str) -> float | None:
    """Bytes per second from one `+F:INDEX:NAME:BPS` line (the last field: one message size asked)."""
    fields = line.split(":")
    if len(fields) < 4 or fields[0] != "+F":
        return None
    try:
        value = float(fields[-1])
    except ValueError:
        return None
    return value if math.isfinite(value) and 0 < value < MAX_BYTES_PER_SECOND else None


def parse_speed(text: str, *, message_bytes: int, seconds: int = SECONDS_PER_CIPHER) -> CryptoSpeed:
    """The script's output -> CryptoSpeed. Each cipher's `+F` line comes before its `status=` line."""
    found: dict[str, str] = {}
    ciphers: list[CipherSpeed] = []
    figure: float | None = None
    for line in text[:MAX_OUTPUT_CHARS].splitlines()[:MAX_OUTPUT_LINES]:
        if line.startswith("+F:"):
            figure = speed_figure(line) or figure
            continue
        key, sep, value = line.partition("=")
        if not sep:
            continue
        if key == "status":
            name, _, code = value.rpartition(":")
            ciphers.append(_cipher(_printable(name), figure, code.strip()))
            figure = None
        else:
            found[key] = _printable(value)
    cores = found.get("cores", "")
    aes = found.get("aes_instructions")
    return CryptoSpeed(
        message_bytes=message_bytes,
        seconds_per_cipher=seconds,
        library=None if found.get("openssl") == "missing" else found.get("version") or "openssl (version unknown)",
        cores=int(cores) if cores.isdigit() and 0 < int(cores) < 100_000 else None,
        aes_instructions=None if aes is None else aes == "yes",
        ciphers=tuple(ciphers),
    )


def _cipher(name: str, figure: float | None, code: str) -> CipherSpeed:
    if figure is not None and code == "0":
        return CipherSpeed(name, figure)
    if code == "0":
        return CipherSpeed(name, None, "openssl printed no figure for it")
    return CipherSpeed(name, None, f"not measured: this openssl does not offer {name}, or {TOO_OLD}")


async def measure_speed(
    transport: Transport, *, message_bytes: int, seconds: int = SECONDS_PER_CIPHER, ciphers=CIPHERS
) -> CryptoSpeed:
    """Run the script on the host (about `seconds` x len(ciphers) of one core) and parse its answer."""
    argv = ["sh", "-c", SCRIPT, "sh", str(int(seconds)), str(int(message_bytes)), *ciphers]
    result = await transport.run(argv, timeout=30 + seconds * len(ciphers) * 5)
    return parse_speed(result.stdout, message_bytes=message_bytes, seconds=seconds)
