"""Issue 56.4: dates under every NLS_DATE_LANGUAGE. An AWR report from a database with
NLS_DATE_LANGUAGE=RUSSIAN writes its snapshot times '15-Дек-22 08:00:05' (DD-Mon-YY HH24:MI:SS, the
month in the session's language); a V$ARCHIVED_LOG export writes '15-ЯНВ-22 08:00:00'. Month names
come from CLDR (Babel) for every language of Oracle's table; Oracle's own abbreviations are not always
CLDR's (Russian ФЕВ, CLDR "февр."), so the reader takes a prefix of the wide name as well.

The fixtures are the shipped AWR report (text and HTML) and V$ARCHIVED_LOG exports (CSV and SQL*Plus
pages), re-rendered with another language's month and in each variant the platform writes (CRLF, a
UTF-8 byte-order mark, UTF-16).
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest
from babel import Locale
from hypothesis import given, settings
from hypothesis import strategies as st

from redolab.redo.ingest.months import ORACLE_LANGUAGES, MonthReader, key, readings
from redolab.redo.ingest.pipeline import Reading, read_files
from redolab.redo.ingest.values import DateColumn
from redolab.redo.parsers import RedoInputError
from tests.variants import encoded

FIXTURES = Path(__file__).parents[1] / "fixtures" / "redo"
SET_AMERICAN = "set NLS_DATE_LANGUAGE=AMERICAN (ALTER SESSION) before the export, or"

# December as Oracle writes MON (initcap under 'DD-Mon-YY') in some NLS_DATE_LANGUAGEs: Oracle's
# Russian abbreviations are ЯНВ ... ДЕК; the others are CLDR's abbreviation or wide name's start.
DECEMBER = {
    "RUSSIAN": "Дек", "RUSSIAN upper": "ДЕК", "GERMAN": "Dez", "FRENCH": "Déc.", "FRENCH upper": "DÉC.",
    "JAPANESE": "12月", "KOREAN": "12월", "SIMPLIFIED CHINESE": "12月", "SPANISH": "Dic", "POLISH": "Gru",
    "TURKISH": "Ara", "GREEK": "Δεκ", "UKRAINIAN": "Гру", "FINNISH": "Jou", "THAI": "ธ.ค.", "HEBREW": "דצמ",
    "CZECH": "Pro", "PORTUGUESE": "Dez",
}  # fmt: skip
# January in V$ARCHIVED_LOG exports, the three characters SQL*Plus's DATE column keeps its width with
JANUARY = {"RUSSIAN": "ЯНВ", "POLISH": "STY", "TURKISH": "OCA", "CROATIAN": "SIJ", "FINNISH": "TAM"}


VARIANTS = [
    "lf",
    "crlf",
    "bom",
    "utf-16",
]


def read(tmp_path: Path, name: str, data: bytes):
    path = tmp_path / name
    path.write_bytes(data)
    reading = Reading()
    return list(read_files([path], reading=reading)), reading


def december(*clock: int) -> datetime:
    return datetime(2022, 12, 15, *clock, tzinfo=UTC)


def awr_report(name: str, token: str) -> str:
    """The shipped report with its snapshots (and startup) in December, MON written as `token`."""
    return (FIXTURES / name).read_text().replace("15-Jan-22", f"15-{token}-22")


@pytest.mark.parametrize("how", VARIANTS)
@pytest.mark.parametrize("language", sorted(DECEMBER))
def test_an_awr_report_in_another_language_reads_its_snapshot_times(tmp_path, language, how):
    text = awr_report("awr_report.txt", DECEMBER[language])
    rows, reading = read(tmp_path, "awrrpt_1_1234_1235.txt", encoded(text, how))
    (row,) = rows
    assert (row.start, row.end) == (december(8, 0, 5), december(8, 30, 5))
    assert row.bytes == 3_774_873_600 and row.thread == 2
    (said,) = [note for note in reading.notes if "month names of NLS_DATE_LANGUAGE" in note]
    assert language.split(" upper")[0] in said or "others" in said


@pytest.mark.parametrize("how", ["lf", "crlf", "bom"])
@pytest.mark.parametrize("language", ["RUSSIAN", "GERMAN", "FRENCH", "JAPANESE"])
def test_an_html_awr_report_in_another_language_reads_its_snapshot_times(tmp_path, language, how):
    text = awr_report("awr_report.html", DECEMBER[language])
    rows, _ = read(tmp_path, "awrrpt_1_1234_1235.html", encoded(text, how))
    (row,) = rows
    assert (row.start, row.end) == (december(8, 0, 5), december(9, 0, 5))


def test_the_russian_report_of_the_issue_with_its_own_dates(tmp_path):
    """'10-Дек-17 10:00:12': the case the issue found, which was refused for having no snapshot times."""
    text = (FIXTURES / "awr_report.txt").read_text()
    text = text.replace("15-Jan-22 08:00:05", "10-Дек-17 10:00:12").replace("15-Jan-22 08:30:05", "10-Дек-17 10:30:12")
    (row,), _ = read(tmp_path, "awrrpt.txt", text.encode())
    assert row.start == datetime(2017, 12, 10, 10, 0, 12, tzinfo=UTC) and row.duration == 1800


@pytest.mark.parametrize("how", VARIANTS)
@pytest.mark.parametrize("language", sorted(JANUARY))
def test_archived_logs_in_another_language_read_as_in_english(tmp_path, language, how):
    for name in ("gv_archived_log.csv", "sqlplus_pages.txt"):
        english, _ = read(tmp_path, name, (FIXTURES / name).read_bytes())
        text = (FIXTURES / name).read_text().replace("-JAN-", f"-{JANUARY[language]}-")
        rendered, _ = read(tmp_path, name, encoded(text, how))
        assert [(r.thread, r.start, r.end, r.bytes) for r in rendered] == [
            (r.thread, r.start, r.end, r.bytes) for r in english
        ], name


def test_a_month_of_two_languages_is_settled_by_the_other_dates(tmp_path):
    """LIS is October in Croatian and November in Czech and Polish: after SIJ (Croatian January) it is
    October; a report whose other date is STU (Croatian November) reads its LIS as October too."""
    column = DateColumn("FIRST_TIME")
    assert column.parse("15-SIJ-22 08:00:00", 2).month == 1
    assert column.parse("15-LIS-22 08:00:00", 3).month == 10
    text = (FIXTURES / "awr_report.txt").read_text()
    text = text.replace("15-Jan-22 08:00:05", "31-Lis-22 23:30:00").replace("15-Jan-22 08:30:05", "01-Stu-22 00:00:00")
    (row,), reading = read(tmp_path, "awrrpt.txt", text.encode())
    assert row.start == datetime(2022, 10, 31, 23, 30, tzinfo=UTC) and row.end == datetime(2022, 11, 1, tzinfo=UTC)
    assert any("NLS_DATE_LANGUAGE CROATIAN" in note for note in reading.notes)


def test_a_month_no_other_date_settles_is_refused_naming_line_value_and_setting(tmp_path):
    with pytest.raises(RedoInputError) as refused:
        DateColumn("FIRST_TIME").parse("15-LIS-22 08:00:00", 7)
    message = str(refused.value)
    assert message.startswith("line 7, FIRST_TIME: '15-LIS-22 08:00:00' is not a date")
    assert "October in CROATIAN" in message and "November in CZECH and POLISH" in message
    assert SET_AMERICAN in message
    text = awr_report("awr_report.txt", "Lis")
    with pytest.raises(RedoInputError, match=r"^awrrpt.txt: line 9: snapshot times '15-Lis-22 08:00:05'") as refused:
        read(tmp_path, "awrrpt.txt", text.encode())
    assert SET_AMERICAN in str(refused.value)


@pytest.mark.parametrize("token", ["XYZ", "Foo.", "ЙЦУ"])
def test_a_month_of_no_language_is_refused_naming_line_value_and_setting(tmp_path, token):
    with pytest.raises(RedoInputError) as refused:
        DateColumn("NEXT_TIME").parse(f"15-{token}-22 08:00:00", 12)
    message = str(refused.value)
    assert message.startswith(f"line 12, NEXT_TIME: '15-{token}-22 08:00:00' is not a date")
    assert "not a month name in any language" in message and SET_AMERICAN in message
    with pytest.raises(RedoInputError) as refused:
        read(tmp_path, "awrrpt.txt", awr_report("awr_report.txt", token).encode())
    assert "line 9" in str(refused.value) and token in str(refused.value) and SET_AMERICAN in str(refused.value)


def test_a_report_whose_snapshot_line_has_no_readable_time_names_the_line(tmp_path):
    text = (FIXTURES / "awr_report.txt").read_text().replace("15-Jan-22 08:00:05", "15.01.2022 08:00")
    with pytest.raises(RedoInputError, match=r"^awrrpt.txt: line 9: 'Begin Snap: .*DD-MON-YY HH24:MI:SS"):
        read(tmp_path, "awrrpt.txt", text.encode())


def test_the_languages_are_oracles_with_cldr_data_for_each():
    """Every NLS_DATE_LANGUAGE of the issue's list (Oracle's table has these and more), each with
    twelve months in CLDR."""
    asked = {
        "AMERICAN", "ARABIC", "BRAZILIAN PORTUGUESE", "BULGARIAN", "CANADIAN FRENCH", "CATALAN", "CROATIAN", "CZECH",
        "DANISH", "DUTCH", "ENGLISH", "ESTONIAN", "FINNISH", "FRENCH", "GERMAN", "GERMAN DIN", "GREEK", "HEBREW",
        "HUNGARIAN", "ICELANDIC", "INDONESIAN", "ITALIAN", "JAPANESE", "KOREAN", "LATIN AMERICAN SPANISH", "LATVIAN",
        "LITHUANIAN", "MEXICAN SPANISH", "NORWEGIAN", "POLISH", "PORTUGUESE", "ROMANIAN", "RUSSIAN",
        "SIMPLIFIED CHINESE", "SLOVAK", "SLOVENIAN", "SPANISH", "SWEDISH", "THAI", "TRADITIONAL CHINESE", "TURKISH",
        "UKRAINIAN", "VIETNAMESE",
    }  # fmt: skip
    assert asked <= set(ORACLE_LANGUAGES)
    for language, locale in ORACLE_LANGUAGES.items():
        assert len(Locale.parse(locale).months["format"]["wide"]) == 12, language


def forms(language: str, month: int) -> list[tuple[str, bool]]:
    """(token, must read) for one language's month: the CLDR abbreviations and wide names always read;
    Oracle's style, the wide name's first three characters upper-cased, reads where no other month of
    the language starts so (Czech ČER is červen and červenec: no language writes it for one of them)."""
    months = Locale.parse(ORACLE_LANGUAGES[language]).months
    names = {
        m: {key(months[c][w][m]) for c in ("format", "stand-alone") for w in ("wide", "abbreviated")}
        for m in range(1, 13)
    }
    found = []
    for context in ("format", "stand-alone"):
        found += [(months[context]["abbreviated"][month], True), (months[context]["wide"][month], True)]
        oracle = months[context]["wide"][month][:3].upper()
        shared = any(n.startswith(key(oracle)) or n == key(oracle) for m, ns in names.items() if m != month for n in ns)
        found.append((oracle, not shared))
    return found


def test_every_language_and_month_reads_back_in_its_language():
    """Every language x every month: in a file of that language each form reads as its month; in a file
    whose language is not known yet it reads as that month or is refused, never as another month."""
    for language in ORACLE_LANGUAGES:
        for month in range(1, 13):
            for token, must in forms(language, month):
                settled = MonthReader()
                settled.languages = {language}
                if must:
                    assert settled.month(token) == month, (language, month, token)
                try:
                    assert MonthReader().month(token) == month or "AMERICAN" in readings(token), (language, token)
                except ValueError:
                    assert len(set(readings(token).values())) > 1 or not must


@settings(max_examples=300, deadline=None, database=None)
@given(
    language=st.sampled_from(sorted(ORACLE_LANGUAGES)),
    month=st.integers(1, 12),
    form=st.integers(0, 5),
    case=st.sampled_from([str.upper, str.title, str.lower, str]),
    day=st.integers(1, 28),
    year=st.integers(0, 99),
    separator=st.sampled_from(["-", "/", " "]),
)
def test_a_date_in_any_language_reads_back(language, month, form, case, day, year, separator):
    """The property over DateColumn: 'DD-MON-YY HH24:MI:SS' with MON in any language and case, in a
    column whose earlier dates were that language, reads back as the date written."""
    token, must = forms(language, month)[form]
    column = DateColumn("FIRST_TIME")
    column._months.languages = {language}
    text = f"{day:02d}{separator}{case(token)}{separator}{year:02d} 10:20:30"
    expected = datetime(2000 + year if year < 50 else 1900 + year, month, day, 10, 20, 30, tzinfo=UTC)
    if separator in token or " " in token:
        return  # 'tháng 1' holds a space: no DD-MON-YY date is written with it
    try:
        assert column.parse(text, 1) == expected
    except RedoInputError as error:
        assert not must, (text, str(error))
        assert SET_AMERICAN in str(error)


def test_english_months_keep_the_fast_path_and_stay_english():
    """MAR is March even though Finnish 'marraskuu' (November) starts so: AMERICAN is the default."""
    assert DateColumn("T").parse("15-MAR-22 08:00:00", 1).month == 3
    assert MonthReader().month("Mar") == 3
    assert MonthReader().month("märz") == 3


def test_in_a_finnish_column_mar_is_november():
    """Once the column's dates are Finnish (TAM, tammikuu), MAR is marraskuu: the English fast path
    steps aside, for the three-character fast path as for the regular parser."""
    column = DateColumn("FIRST_TIME")
    assert column.parse("15-TAM-22 08:00:00", 1).month == 1
    assert column.parse("15-MAR-22 08:00:00", 2).month == 11
    assert column.parse("15-Mar-22 08:00:00", 3).month == 11
    assert column._parse("16-MAR-22 08:00:00", 4).month == 11
