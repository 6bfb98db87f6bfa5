"""Numbers under every NLS_NUMERIC_CHARACTERS (issue 32.1): the decimal and group separators of a
file come from its values or from the user's choice, are said in the preview, and a file that
could be read either way is refused with the question, never guessed.

Written from Oracle's documentation of NLS_NUMERIC_CHARACTERS ("decimal_character
group_separator", either may be a space) and SQL*Plus's way of writing NUMBER columns (right
aligned, no leading zero: 0.3 is '.3', ',3' under ',.'); tests/redo/nls.py re-renders the fixtures.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from redolab.redo.analytics import analyze
from redolab.redo.archive import Source
from redolab.redo.ingest.mapping import clean_mapping
from redolab.redo.ingest.pipeline import Reading, read_sources, summarise
from redolab.redo.ingest.values import NumberFormat, detect_numbers, parse_number
from redolab.redo.parsers import RedoInputError
from tests.redo.nls import GROUPS, comma_number, render_comma_decimals

FIXTURES = Path(__file__).parents[1] / "fixtures" / "redo"
# every redo file whose numbers redolab's own readers convert (the AWR report reader and the Db2
# readers convert theirs themselves: another issue's)
SUPPORTED = sorted(
    path
    for path in FIXTURES.rglob("*")
    if path.is_file() and "bad" not in path.name and not path.name.startswith("awr_report")
)
AWR_MINER = FIXTURES / "collectors" / "awr-hist-1234567890-ORCL-1000-1003.out"


def _read(tmp_path: Path, name: str, data: bytes, decimal: str = "auto") -> tuple[list[tuple], Reading]:
    path = tmp_path / "upload"
    path.write_bytes(data)
    reading = Reading()
    mapping = clean_mapping({"decimal": decimal})
    rows = [
        (i.thread, i.start, i.end, i.seconds, i.bytes, i.peak_bytes_per_second, i.percentile_bytes_per_second, i.hour)
        for i in read_sources([Source(path, name)], mapping=mapping, reading=reading)
    ]
    return rows, reading


def test_the_fixtures_cover_each_reader():
    names = {path.name for path in SUPPORTED}
    assert {"seed000.csv", "seed000_sqlplus.txt", "sysmetric.tsv", AWR_MINER.name} <= names
    assert len(SUPPORTED) >= 14


@settings(max_examples=60, deadline=None, database=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    index=st.integers(0, len(SUPPORTED) - 1),
    group=st.sampled_from(GROUPS),
    semicolons=st.booleans(),
    crlf=st.booleans(),
)
def test_a_file_rendered_with_decimal_commas_reads_to_the_same_numbers(tmp_path, index, group, semicolons, crlf):
    """Any supported file re-rendered with a decimal comma (and '.', a space or no group separator):
    read by its values, it gives the original numbers or asks which separator (never other
    numbers); with the decimal comma chosen, it always gives the original numbers."""
    path = SUPPORTED[index]
    name = str(path.relative_to(FIXTURES))
    original, _ = _read(tmp_path, name, path.read_bytes())
    rendered = render_comma_decimals(path.read_bytes(), group, semicolons=semicolons)
    assert rendered is not None, name
    if crlf:
        rendered = rendered.replace(b"\r\n", b"\n").replace(b"\n", b"\r\n")
    try:
        detected, reading = _read(tmp_path, name, rendered)
    except RedoInputError as error:
        assert "choose the decimal separator" in str(error), (name, str(error))
        assert "line " in str(error) and name in str(error)
    else:
        assert detected == original, name
    chosen, reading = _read(tmp_path, name, rendered, "comma")
    assert chosen == original, name
    assert all(how.startswith("decimal comma") and "as chosen" in how for how in reading.numbers.values())


def test_awr_miner_rate_written_with_a_leading_decimal_comma_is_three_tenths(tmp_path):
    """',3' under NLS_NUMERIC_CHARACTERS ',.' is 0.3 MiB/s, not 3: the peak is not ten times too high."""
    text = AWR_MINER.read_text()
    at = text.index("~~BEGIN-MAIN-METRICS~~")
    body = text[at:]
    lines = body.splitlines(keepends=True)
    for i, line in enumerate(lines):
        if line.lstrip().startswith("1001") and "12.5" in line:
            lines[i] = line.replace("12.5", "  ,3")
            break
    rendered = render_comma_decimals((text[:at] + "".join(lines)).encode(), None)
    rows, reading = _read(tmp_path, AWR_MINER.name, rendered)
    rates = {(thread, start): size / seconds for thread, start, _end, seconds, size, *_ in rows}
    first = min(start for _, start in rates)
    assert rates[(1, first)] == pytest.approx(0.3 * 1024 * 1024)
    assert reading.numbers[AWR_MINER.name] == "decimal comma, as NLS_NUMERIC_CHARACTERS ',.' (seen in the file)"


def test_a_comma_with_three_digits_alone_asks_naming_file_column_and_line(tmp_path):
    data = b'DAY,HOUR,MB\n2024-03-01,00,"1,234"\n2024-03-01,01,"2,500"\n'
    with pytest.raises(RedoInputError) as error:
        _read(tmp_path, "volumes.csv", data)
    message = str(error.value)
    assert message.startswith("volumes.csv: line 2, MB: '1,234' could be a number with a group separator")
    assert "choose the decimal separator" in message
    point, _ = _read(tmp_path, "volumes.csv", data, "point")
    comma, _ = _read(tmp_path, "volumes.csv", data, "comma")
    assert [row[4] for row in point] == [1234 * 1024 * 1024, 2500 * 1024 * 1024]
    assert [row[4] for row in comma] == pytest.approx([1.234 * 1024 * 1024, 2.5 * 1024 * 1024])


def test_another_value_of_the_file_settles_the_comma(tmp_path):
    """'1,234' with a '7,8' elsewhere is 1.234; with a '1,234,567' elsewhere it is 1234."""
    decimal = b"DAY;HOUR;MB\n2024-03-01;00;1,234\n2024-03-01;01;7,8\n"
    grouped = b"DAY;HOUR;MB\n2024-03-01;00;1,234\n2024-03-01;01;1,234,567\n"
    rows, reading = _read(tmp_path, "a.csv", decimal)
    assert [row[4] / 1024 / 1024 for row in rows] == pytest.approx([1.234, 7.8])
    assert reading.numbers["a.csv"].startswith("decimal comma")
    rows, reading = _read(tmp_path, "b.csv", grouped)
    assert [row[4] / 1024 / 1024 for row in rows] == [1234, 1234567]
    assert reading.numbers["b.csv"].startswith("decimal point, ',' between groups of digits")


def test_a_whole_number_column_reads_its_separator_as_a_group(tmp_path):
    """BLOCKS and BYTES are whole numbers: '1.234' there is one thousand two hundred and thirty-four."""
    data = (
        b"THREAD#;SEQUENCE#;FIRST_TIME;NEXT_TIME;BLOCKS;BLOCK_SIZE\n"
        b"1;10;15-JAN-22 08:00:00;15-JAN-22 08:10:00;1.234;512\n"
    )
    rows, reading = _read(tmp_path, "logs.csv", data)
    assert rows[0][4] == 1234 * 512
    assert reading.numbers["logs.csv"].startswith("decimal comma, '.' between groups of digits")


def test_a_file_with_both_decimal_characters_is_refused_naming_both(tmp_path):
    data = b"DAY;HOUR;MB\n2024-03-01;00;1.5\n2024-03-01;01;7,8\n"
    with pytest.raises(RedoInputError, match=r"line 2, MB: '1.5'.*line 3, MB: '7,8'"):
        _read(tmp_path, "mixed.csv", data)


def test_a_value_against_the_chosen_separator_is_refused_naming_it(tmp_path):
    data = b"DAY;HOUR;MB\n2024-03-01;00;1.5\n"
    with pytest.raises(RedoInputError, match=r"line 2, MB: '1.5' is not a number written with a decimal comma"):
        _read(tmp_path, "chosen.csv", data, "comma")


def test_an_unknown_choice_is_refused():
    with pytest.raises(RedoInputError, match="decimal 'european' is not a decimal separator"):
        clean_mapping({"decimal": "european"})
    assert clean_mapping({"decimal": "auto"}) is None
    assert clean_mapping({"decimal": "Comma"}) == {"decimal": "comma"}


def test_the_summary_says_how_each_file_writes_numbers(tmp_path):
    data = b"DAY;HOUR;MB\n2024-03-01;00;1 234,5\n2024-03-01;01;7,8\n"
    path = tmp_path / "upload"
    path.write_bytes(data)
    reading = Reading()
    analysis = analyze(read_sources([Source(path, "eu.csv")], reading=reading))
    summary = summarise(analysis, fmt="delimited", reading=reading)
    assert summary["numbers"] == {
        "eu.csv": "decimal comma, groups of digits split by spaces, as NLS_NUMERIC_CHARACTERS ', ' (seen in the file)"
    }
    assert not any("decimal comma" in note for note in summary["notes"])  # said once, in `numbers`
    assert any(note.startswith("Numbers: decimal comma") for note in reading.notes)  # an import keeps it


@pytest.mark.parametrize(
    ("text", "decimal", "value"),
    [
        (",3", ",", 0.3),
        ("7,8", ",", 7.8),
        ("1.234,5", ",", 1234.5),
        ("1 234 567,25", ",", 1234567.25),
        ("1234", ",", 1234.0),
        ("1,5E+09", ",", 1.5e9),
        (".0038", ".", 0.0038),
        ("1,234.5", ".", 1234.5),
        ("1 234.5", ".", 1234.5),
    ],
)
def test_numbers_as_nls_writes_them(text, decimal, value):
    assert NumberFormat(decimal, None, "choice").parse(text, line=1, column="X") == pytest.approx(value)


@pytest.mark.parametrize("text", ["1,234,5", "1.2.3", ",", "", "-1,5", "1,23,456", "١٢٣"])
def test_what_no_setting_writes_is_refused(text):
    with pytest.raises(RedoInputError, match="line 4, X"):
        NumberFormat(",", None, "choice").parse(text, line=4, column="X")


@given(
    value=st.decimals(min_value=0, max_value=10**12, places=3, allow_nan=False, allow_infinity=False),
    group=st.sampled_from(GROUPS),
)
@settings(max_examples=200, deadline=None, database=None)
def test_any_number_written_with_a_decimal_comma_reads_back(value, group):
    english = f"{value:,f}"
    written = comma_number(english, group)
    read = parse_number(written, line=1, column="X", numbers=NumberFormat(",", None, "choice"))
    assert read == pytest.approx(float(value))
    try:
        found = detect_numbers([(1, "X", written, False)])
    except RedoInputError as error:  # '123,000' alone: a group or three decimals; the user says which
        assert "choose the decimal separator" in str(error)
    else:
        assert found.decimal == ","  # every value here has decimals: read as a decimal comma, never a group


AMBIGUOUS = b"DAY;HOUR;MB\n2024-03-01;00;1,234\n2024-03-01;01;2,500\n"


def test_api_asks_for_the_separator_then_imports_with_the_choice(api_client, session):
    """An ambiguous file is a 422 naming the file, the column and the line; sent again with
    decimal=comma it previews (saying so), and the import keeps the choice."""
    from tests.factories import make_environment

    environment = make_environment(session)
    base = f"/api/v1/environments/{environment.id}/redo"
    refused = api_client.post(f"{base}/preview", files={"file": ("eu.csv", AMBIGUOUS)})
    assert refused.status_code == 422
    message = refused.json()["detail"][0]["msg"]
    assert message.startswith("eu.csv: line 2, MB: '1,234' could be a number") and "decimal=comma" in message
    preview = api_client.post(f"{base}/preview", files={"file": ("eu.csv", AMBIGUOUS)}, data={"decimal": "comma"})
    assert preview.status_code == 200, preview.text
    body = preview.json()
    assert body["numbers"] == {"eu.csv": "decimal comma, as NLS_NUMERIC_CHARACTERS ',.' (as chosen)"}
    assert body["mapping"]["decimal"] == "comma"
    imported = api_client.post(f"{base}/imports", json={"upload_token": body["upload_token"], "decimal": "comma"})
    assert imported.status_code == 201, imported.text
    assert imported.json()["rows_kept"] == 2
    analytics = api_client.get(f"{base}/analytics").json()
    assert analytics["threads"][0]["peak_bytes_per_second"] == pytest.approx(2.5 * 1024 * 1024 / 3600)
    bad = api_client.post(f"{base}/preview", files={"file": ("eu.csv", AMBIGUOUS)}, data={"decimal": "euro"})
    assert bad.status_code == 422 and "is not a decimal separator" in bad.text


def test_page_preview_states_the_separator_and_keeps_the_choice(browser_client, session):
    from tests.factories import make_environment

    environment = make_environment(session)
    htmx = {"HX-Request": "true"}
    url = f"/environments/{environment.id}/redo/preview"
    data = b"DAY;HOUR;MB\n2024-03-01;00;1,5\n2024-03-01;01;,3\n"
    preview = browser_client.post(url, files={"file": ("eu.csv", data)}, data={"format": "auto"}, headers=htmx)
    assert preview.status_code == 200, preview.text
    assert "decimal comma, as NLS_NUMERIC_CHARACTERS &#39;,.&#39; (seen in the file)" in preview.text
    token = preview.text.split('name="upload_token" value="')[1].split('"')[0]
    again = browser_client.post(url, data={"upload_token": token, "format": "auto", "decimal": "point"}, headers=htmx)
    assert again.status_code == 422
    assert "line 2, MB: &#39;1,5&#39; is not a number written with a decimal point" in again.text
    assert '<option value="point" selected>' in again.text


def test_an_archives_members_share_the_choice_not_the_columns(tmp_path):
    """An archive's members map their own columns; the decimal choice (an option) applies to all."""
    import zipfile

    from redolab.redo.ingest.mapping import options_of
    from redolab.redo.ingest.pipeline import prepare

    archive = tmp_path / "eu.zip"
    with zipfile.ZipFile(archive, "w") as bundle:
        bundle.writestr("a.csv", AMBIGUOUS)
        bundle.writestr("b.csv", AMBIGUOUS.replace(b"2024-03-01", b"2024-03-02"))
    (tmp_path / "work").mkdir()
    chosen = clean_mapping({"decimal": "comma", "mb": "MB", "log_file_pages": "1024"})
    assert options_of(chosen) == {"decimal": "comma", "log_file_pages": "1024"}
    assert options_of(clean_mapping({"mb": "MB"})) is None
    used, _ = prepare(archive, "eu.zip", tmp_path / "work", mapping=chosen)
    reading = Reading()
    sizes = [i.bytes for i in read_sources(used, mapping=options_of(chosen), reading=reading)]
    assert sizes == pytest.approx([1.234 * 2**20, 2.5 * 2**20] * 2)
    assert set(reading.numbers) == {"eu.zip/a.csv", "eu.zip/b.csv"}


@pytest.mark.parametrize(
    "unit",
    ["1,234", "9", " ", ",", "1.", "1 234 ", "'"],
    ids=["groups", "digits", "spaces", "commas", "points", "space-groups", "quotes"],
)
def test_reading_a_pathological_value_grows_linearly(unit):
    """The number patterns are anchored with no nested unbounded quantifiers over the same
    characters: a value 4 times longer takes at most about 4 times as long (ratio of the best of
    several runs of this process's CPU time, which another process on a busy machine does not count)."""
    import time

    def best(text: str) -> float:
        times = []
        for _ in range(5):
            began = time.process_time()
            for numbers in (NumberFormat(",", None, "choice"), NumberFormat(".", None, "choice")):
                with pytest.raises(RedoInputError):
                    numbers.parse(text + "x", line=1, column="X")
            with pytest.raises(RedoInputError):
                detect_numbers([(1, "X", text + "x", False), (2, "X", "1,234", False)])
            times.append(time.process_time() - began)
        return min(times)

    short, long = best(unit * 20_000), best(unit * 80_000)
    assert long / max(short, 1e-6) < 12, (short, long)
