"""The encryption ceiling on the transport card (no database): per stream and per host against the
requirement per thread and summed; the message size it is timed at."""

import pytest

from redolab.environments.releases import Release
from redolab.planning.encryption import HostCeiling, crypto_message_bytes
from redolab.planning.plan import PASS, WARN, build_plan
from redolab.remote.crypto import NO_OPENSSL, CipherSpeed, CryptoSpeed
from tests.planning.test_plan import MIB, facts, history, run

RUNS = [run(1, node=1, rate_mib=60), run(2, node=2, rate_mib=20), run(3, node=1, conns=4, rate_mib=70)]


def measured(aes_mib: float, chacha_mib: float, cores: int = 2) -> CryptoSpeed:
    return CryptoSpeed(
        message_bytes=65535,
        seconds_per_cipher=1,
        library="OpenSSL 3.0.19 27 Jan 2026",
        cores=cores,
        aes_instructions=False,
        ciphers=(CipherSpeed("aes-256-gcm", aes_mib * MIB), CipherSpeed("chacha20-poly1305", chacha_mib * MIB)),
    )


def no_openssl() -> CryptoSpeed:
    return CryptoSpeed(message_bytes=65535, seconds_per_cipher=1, library=None, cores=4, aes_instructions=True)


def transport(*ceilings: HostCeiling):
    plan = build_plan(facts=facts(host_ceilings=ceilings), requirement=history(), runs=RUNS)
    return plan, plan.card("transport")


def test_not_measured_anywhere_leaves_the_card_as_it_was():
    _plan, card = transport(HostCeiling("db1 (primary 1)", None))
    assert card.status == PASS and not any(label.startswith("Encryption") for label, _ in card.rows)
    assert "encryption" not in card.values


def test_ceilings_above_the_requirement_are_shown_per_stream_and_per_host():
    plan, card = transport(
        HostCeiling("db1 (primary 1)", measured(3000, 2000), "2026-03-03 10:00 UTC"),
        HostCeiling("sb1 (standby 1)", no_openssl()),
        HostCeiling("sb2 (standby 2)", None),
    )
    assert card.status == PASS
    rows = dict(card.rows)
    assert rows["Encryption ceiling, db1 (primary 1)"] == (
        "AES-256-GCM 3,000 MiB/s per stream, 6,000 MiB/s per host (2 cores); "
        "ChaCha20-Poly1305 2,000 MiB/s per stream, 4,000 MiB/s per host (2 cores)"
    )
    assert rows["Encryption ceiling, sb1 (standby 1)"] == NO_OPENSSL
    assert rows["Encryption ceiling, sb2 (standby 2)"].startswith("not measured yet")
    assert any("OpenSSL 3.0.19" in line and "64 KiB messages" in line and "no AES" in line for line in card.working)
    assert [e["host"] for e in plan.to_json()["cards"]["transport"]["values"]["encryption"]] == [
        "db1 (primary 1)",
        "sb1 (standby 1)",
        "sb2 (standby 2)",
    ]


def test_a_stream_ceiling_below_a_threads_requirement_warns():
    # thread 1 needs 40 MiB/s x 1.3 = 52 MiB/s; all threads 65 MiB/s. AES: 40 per core, 80 on 2 cores;
    # ChaCha20: 30 per core, 60 per host (below 65 too).
    plan, card = transport(HostCeiling("db1 (primary 1)", measured(40, 30), "2026-03-03 10:00 UTC"))
    assert card.status == WARN and "encryption would cap it" in card.headline
    said = [r for r in plan.risks if r.startswith("db1 (primary 1)")]
    assert said == [
        "db1 (primary 1): one core encrypts 40 MiB/s with AES-256-GCM, below thread 1's 52 MiB/s: "
        "an encrypted redo stream with AES-256-GCM cannot keep up there",
        "db1 (primary 1): one core encrypts 30 MiB/s with ChaCha20-Poly1305, below thread 1's 52 MiB/s: "
        "an encrypted redo stream with ChaCha20-Poly1305 cannot keep up there",
        "db1 (primary 1): all its cores encrypt at most 60 MiB/s with ChaCha20-Poly1305, below all threads' 65 MiB/s",
    ]


def test_a_failing_card_stays_failed():
    slow = [run(1, node=1, rate_mib=10), run(2, node=2, rate_mib=20), run(3, node=1, conns=4, rate_mib=70)]
    plan = build_plan(
        facts=facts(host_ceilings=(HostCeiling("db1", measured(1, 1)),)), requirement=history(), runs=slow
    )
    assert plan.card("transport").status == "fail"
    assert any("one core encrypts 1 MiB/s" in r for r in plan.risks)


@pytest.mark.parametrize(
    ("release", "mode", "expected"),
    [
        (Release(19), "SYNC", 65535),  # the SDU the plan sets for SYNC (MOS 2064368.1)
        (Release(19), "FASTSYNC", 65535),
        (Release(19), "ASYNC", 8192),  # ASYNC keeps the release's default
        (Release(23), "ASYNC", 65536),  # 23ai's server default
        (Release(10, 2), "ASYNC", 32767),  # before 11.1 ASYNC is sent in SDU units: the maximum
        (None, "ASYNC", 65535),  # the release not known
    ],
)
def test_message_size_follows_the_sdu(release, mode, expected):
    size, why = crypto_message_bytes(release, mode)
    assert size == expected and str(expected) in why


def test_hadr_is_timed_at_a_tls_record():
    assert crypto_message_bytes(None, "NEARSYNC", "hadr")[0] == 16384
