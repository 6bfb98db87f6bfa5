"""The plan's Db2 settings start from the values the db2pd captures show (needs the planning diff)."""

from pathlib import Path

from redolab.hadr import service
from redolab.planning.service import environment_plan
from tests.factories import make_environment

FIXTURES = Path(__file__).parents[1] / "fixtures" / "db2"


def test_the_plans_db2_settings_start_from_the_captured_values(session):
    environment = make_environment(
        session, platform="hadr", transport_mode="NEARSYNC", link_rtt_seconds=0.01, link_bandwidth_bits_per_second=10**9
    )
    service.import_captures(
        session=session,
        environment=environment,
        path=FIXTURES / "db2pd_hadr_111_both_sides.txt",
        filename="salesdb.txt",
        imported_by="alice",
    )
    plan = environment_plan(session=session, environment=environment)
    lines = {line.line: line.why for snippet in plan.snippets for line in snippet.lines}
    assert "db2 update db cfg for <DBNAME> using HADR_PEER_WINDOW 300" in lines  # the primary's, not 120 below it
    assert (
        "300 s on the primary side; 120 s on the standby side"
        in lines["db2 update db cfg for <DBNAME> using HADR_PEER_WINDOW 300"]
    )
    timeout = lines["db2 update db cfg for <DBNAME> using HADR_TIMEOUT 120"]
    assert "raised from 60 s" in timeout and "60 s on both sides" in timeout
    buffer = next(line for line in lines if line.startswith("db2set DB2_HADR_BUF_SIZE="))
    assert buffer == "db2set DB2_HADR_BUF_SIZE=4096" and "is kept" in lines[buffer]
    send = next(why for line, why in lines.items() if line.startswith("db2set DB2_HADR_SOSNDBUF="))
    assert "granted 87,040 bytes on both sides" in send
