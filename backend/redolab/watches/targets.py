"""Where a webhook, Slack or Teams receiver may be sent: never inward unless the operator says so.

A receiver's URL is a request redolab makes on an admin's behalf, from inside the network redolab sits
in. Without REDOLAB_WEBHOOK_ALLOW, every address its host resolves to must be a public one: loopback
(127/8 in any spelling: 127.1, 0x7f.1, 2130706433, [::ffff:127.0.0.1]), the unspecified 0.0.0.0 and ::,
link-local (169.254/16, fe80::/10: cloud metadata), private (10/8, 172.16/12, 192.168/16, fc00::/7),
shared (100.64/10, carrier-grade NAT), multicast and the reserved and documentation ranges are refused,
also when embedded in an IPv6 address (IPv4-mapped, 6to4, Teredo, NAT64). With the list set, a URL must
fall under one of its entries, and one that does may go to any address (the operator named it).

An entry is compared by its parts, never as a string prefix: the scheme, the host (case and a final dot
aside), the port (the scheme's default when left out) and the path, normalised as the receiver will
read it (percent escapes decoded, "." and ".." segments resolved), segment by segment:
"https://example.com/hooks/" allows /hooks/a, not /hooksmith nor /hooks/../admin.

The check is made when the receiver is created (a name that does not resolve then is checked at its
first send) and again at every send, and the connection goes to the addresses that were checked, so a
name that resolves elsewhere a second time (DNS rebinding) is never asked again."""

from __future__ import annotations

import ipaddress
import posixpath
import socket
from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import unquote, urlsplit

DEFAULT_PORTS = {"http": 80, "https": 443}
_SHARED = ipaddress.ip_network("100.64.0.0/10")
_NAT64 = ipaddress.ip_network("64:ff9b::/96")
_IPV4_COMPATIBLE = ipaddress.ip_network("::/96")  # deprecated ::a.b.c.d

Address = ipaddress.IPv4Address | ipaddress.IPv6Address
# (family, type, proto, canonname, sockaddr), as socket.getaddrinfo returns them
AddressInfo = tuple[int, int, int, str, tuple]
Resolver = Callable[..., list[AddressInfo]]


class TargetRefused(Exception):
    """A receiver's URL redolab will not send to; the message is redolab's own words."""


class NotResolved(TargetRefused):
    """The URL's host name resolves to nothing (now)."""


@dataclass(frozen=True)
class Origin:
    """A URL's parts as the allow list compares them."""

    scheme: str
    host: str
    port: int
    path: str  # normalised: starts with "/", no "." or ".." segments, escapes decoded

    @classmethod
    def of(cls, url: str) -> Origin:
        """ValueError: not an http(s) URL with a host."""
        parts = urlsplit(url.strip())
        scheme = parts.scheme.lower()
        if scheme not in DEFAULT_PORTS or not parts.hostname:
            raise ValueError(f"{url[:100]!r} is not an http(s) URL with a host")
        host = parts.hostname.lower().rstrip(".")
        return cls(scheme, host, parts.port or DEFAULT_PORTS[scheme], normalised_path(parts.path))

    def allows(self, other: Origin) -> bool:
        """Whether `other` falls under this entry: same scheme, host and port, and its path under this
        path's segments."""
        if (self.scheme, self.host, self.port) != (other.scheme, other.host, other.port):
            return False
        base = self.path.rstrip("/")
        return other.path == base or other.path.startswith(base + "/")


def normalised_path(path: str) -> str:
    """The path as a server reads it: escapes decoded (%2e%2e is ..; %2f is /), backslashes as slashes
    (some servers take them so), dot segments resolved; "/" when empty."""
    decoded = unquote(path).replace("\\", "/")
    if not decoded.startswith("/"):
        decoded = "/" + decoded
    resolved = posixpath.normpath(decoded)
    resolved = "/" + resolved.lstrip("/")  # normpath keeps a leading "//"
    return resolved + "/" if decoded.endswith("/") and resolved != "/" else resolved


def allow_entries(allow: list[str]) -> list[Origin]:
    """REDOLAB_WEBHOOK_ALLOW's entries (core.config checked that each is an http(s) URL with a host)."""
    return [Origin.of(entry) for entry in allow]


def named_by(url: str, allow: list[str]) -> bool:
    """Whether an entry of `allow` covers `url` (an empty list names nothing)."""
    try:
        target = Origin.of(url)
    except ValueError:
        return False
    return any(entry.allows(target) for entry in allow_entries(allow))


def inward(address: Address) -> bool:
    """Whether `address` is not one of the public Internet's: loopback, unspecified, link-local, private,
    shared, reserved, documentation or multicast, also inside an IPv6 address that carries an IPv4 one."""
    if isinstance(address, ipaddress.IPv6Address):
        embedded = address.ipv4_mapped or address.sixtofour or (address.teredo or (None, None))[1]
        if embedded is None and address in _NAT64:
            embedded = ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
        if embedded is not None:
            return inward(embedded)
        if address in _IPV4_COMPATIBLE or address.is_site_local:
            return True
    if isinstance(address, ipaddress.IPv4Address) and address in _SHARED:
        return True
    return (
        address.is_loopback
        or address.is_unspecified
        or address.is_link_local
        or address.is_private
        or address.is_multicast
        or address.is_reserved
        or not address.is_global
    )


def _address(sockaddr: tuple) -> Address:
    return ipaddress.ip_address(str(sockaddr[0]).split("%")[0])  # an IPv6 scope ("%eth0") aside


def _resolved(host: str, port: int, resolve: Resolver | None) -> list[AddressInfo]:
    try:
        return list((resolve or socket.getaddrinfo)(host, port, type=socket.SOCK_STREAM))
    except (socket.gaierror, UnicodeError) as error:
        raise NotResolved("host name not found") from error


def checked_addresses(url: str, allow: list[str], resolve: Resolver | None = None) -> list[AddressInfo]:
    """The addresses to connect to for `url`, each checked: TargetRefused (with the reason in redolab's
    words) when the URL is outside a set allow list, or, without one, when any address is inward."""
    try:
        target = Origin.of(url)
    except ValueError as error:
        raise TargetRefused("not an http(s) URL") from error
    named = any(entry.allows(target) for entry in allow_entries(allow))
    if allow and not named:
        raise TargetRefused("refused: the URL is under no entry of REDOLAB_WEBHOOK_ALLOW")
    found = _resolved(target.host, target.port, resolve)
    if not found:
        raise NotResolved("host name not found")
    if not named and any(inward(_address(info[4])) for info in found):
        raise TargetRefused(
            "refused: the host is a loopback, private or link-local address "
            "(name it in REDOLAB_WEBHOOK_ALLOW to send there)"
        )
    return found


def refusal(url: str, allow: list[str], resolve: Resolver | None = None) -> str | None:
    """Why a receiver with `url` cannot be created (None: it can). A name that does not resolve now is
    not refused: it is checked again at every send."""
    if named_by(url, allow):
        return None  # the operator named it: nothing to resolve
    try:
        checked_addresses(url, allow, resolve)
    except NotResolved:
        return None
    except TargetRefused as refused:
        return str(refused)
    return None


def connect_to(addresses: list[AddressInfo]) -> Callable[..., socket.socket]:
    """A socket.create_connection for http.client that ignores the host it is given and connects to the
    checked `addresses` (in order; the first that answers), so nothing is resolved a second time."""

    def connect(_address, timeout=None, source_address=None, *_args, **_kwargs) -> socket.socket:
        last: OSError | None = None
        for family, kind, proto, _name, sockaddr in addresses:
            sock = socket.socket(family, kind, proto)
            try:
                if isinstance(timeout, int | float):  # else socket's "global default" marker
                    sock.settimeout(timeout)
                if source_address:
                    sock.bind(source_address)
                sock.connect(sockaddr)
                return sock
            except OSError as error:
                sock.close()
                last = error
        raise last or OSError("no address to connect to")

    return connect
