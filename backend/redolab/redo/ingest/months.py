"""Month names as Oracle writes them under every NLS_DATE_LANGUAGE, read from CLDR (Babel).

Oracle's MON is not always CLDR's abbreviation (Russian ДЕК where CLDR has "дек.", ФЕВ where it has
"февр."), so a month token is matched loosely: dots stripped, accents dropped, case folded, it names
month m in a language when it equals one of that language's abbreviations or wide names of m, or is a prefix of at
least 3 characters (or the whole) of a wide name of m (format or stand-alone form) and of no other month's wide name
in that language. A token may name different months in different languages (LIS is October in
Croatian, November in Czech and Polish): the file's other tokens settle which language it is, and
where they do not the date is refused with the languages named, never guessed.
"""

from __future__ import annotations

import calendar
import unicodedata
from dataclasses import dataclass
from functools import cache

# Oracle Database Globalization Support Guide, appendix A "Locale Data", table "Oracle Database Supported
# Languages": each NLS_LANGUAGE (NLS_DATE_LANGUAGE takes the same values) and the CLDR locale whose
# month names it uses. The month names themselves come from CLDR, never from this file.
ORACLE_LANGUAGES = {
    "ALBANIAN": "sq", "AMERICAN": "en", "AMHARIC": "am", "ARABIC": "ar", "ARMENIAN": "hy", "ASSAMESE": "as",
    "AZERBAIJANI": "az", "BANGLA": "bn", "BELARUSIAN": "be", "BENGALI": "bn", "BRAZILIAN PORTUGUESE": "pt_BR",
    "BULGARIAN": "bg", "CANADIAN FRENCH": "fr_CA", "CATALAN": "ca", "CROATIAN": "hr", "CYRILLIC KAZAKH": "kk",
    "CYRILLIC SERBIAN": "sr_Cyrl", "CYRILLIC UZBEK": "uz_Cyrl", "CZECH": "cs", "DANISH": "da", "DARI": "fa_AF",
    "DIVEHI": "dv", "DUTCH": "nl", "EGYPTIAN": "ar_EG", "ENGLISH": "en_GB", "ESTONIAN": "et", "FINNISH": "fi",
    "FRENCH": "fr", "GERMAN": "de", "GERMAN DIN": "de", "GREEK": "el", "GUJARATI": "gu", "HEBREW": "he",
    "HINDI": "hi", "HUNGARIAN": "hu", "ICELANDIC": "is", "INDONESIAN": "id", "IRISH": "ga", "ITALIAN": "it",
    "JAPANESE": "ja", "KANNADA": "kn", "KHMER": "km", "KOREAN": "ko", "LAO": "lo",
    "LATIN AMERICAN SPANISH": "es_419", "LATIN BOSNIAN": "bs", "LATIN SERBIAN": "sr_Latn", "LATIN UZBEK": "uz",
    "LATVIAN": "lv", "LITHUANIAN": "lt", "MACEDONIAN": "mk", "MALAY": "ms", "MALAYALAM": "ml", "MALTESE": "mt",
    "MARATHI": "mr", "MEXICAN SPANISH": "es_MX", "NEPALI": "ne", "NORWEGIAN": "nb", "ORIYA": "or",
    "PERSIAN": "fa", "POLISH": "pl", "PORTUGUESE": "pt_PT", "PUNJABI": "pa", "ROMANIAN": "ro", "RUSSIAN": "ru",
    "SIMPLIFIED CHINESE": "zh_Hans", "SINHALA": "si", "SLOVAK": "sk", "SLOVENIAN": "sl", "SPANISH": "es",
    "SWAHILI": "sw", "SWEDISH": "sv", "TAMIL": "ta", "TELUGU": "te", "THAI": "th",
    "TRADITIONAL CHINESE": "zh_Hant", "TURKISH": "tr", "UKRAINIAN": "uk", "URDU": "ur", "VIETNAMESE": "vi",
}  # fmt: skip
# NLS_DATE_LANGUAGE AMERICAN's MON, the default: read first, and as it always was
_AMERICAN_MON = ["JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC"]
ENGLISH = {name: number for number, name in enumerate(_AMERICAN_MON, 1)}
MAX_TOKEN = 24  # the longest month name read (a wide name with its case ending)
SET_AMERICAN = (
    "set NLS_DATE_LANGUAGE=AMERICAN (ALTER SESSION) before the export, "
    "or export the times with TO_CHAR(time, 'YYYY-MM-DD HH24:MI:SS')"
)


def key(text: str) -> str:
    """A month token as it is compared: NFKD (full-width digits as digits), dots dropped, case folded,
    and the accents of Latin, Greek and Cyrillic letters dropped ('DÉC.' -> 'dec', 'ΜΑΪ' -> 'μαι'); the
    vowel signs of Thai or Devanagari are letters of the name and stay."""
    kept: list[str] = []
    base = ""
    for ch in unicodedata.normalize("NFKD", text.strip()):
        if ch == ".":
            continue
        if unicodedata.combining(ch):
            if base < _LAST_ACCENTED:
                continue
        else:
            base = ch
        kept.append(ch)
    return "".join(kept).casefold()


_LAST_ACCENTED = "\u0530"  # the end of the Cyrillic block: Latin, Greek and Cyrillic letters carry accents


@dataclass(frozen=True)
class MonthNames:
    """Per language, each month's names from CLDR: the abbreviations (format and stand-alone) and the
    wide names (format, as in '10 декабря', and stand-alone, as in 'декабрь')."""

    whole: dict[str, dict[str, int]]  # key -> language -> month: abbreviations and whole wide names
    prefixes: dict[str, dict[str, int]]  # key -> language -> month, only where one month's wide names have it


@cache
def month_names() -> MonthNames:
    """Built once, on first use: reading CLDR for every language takes half a second, which a process
    that never meets a month name of another language does not pay (nor Babel's import)."""
    from babel import Locale

    whole: dict[str, dict[str, int]] = {}
    prefixes: dict[str, dict[str, set[int]]] = {}
    for language, locale_id in ORACLE_LANGUAGES.items():
        months = Locale.parse(locale_id).months
        for context in ("format", "stand-alone"):
            for month, name in months[context]["abbreviated"].items():
                whole.setdefault(key(name), {})[language] = month
            for month, name in months[context]["wide"].items():
                wide = key(name)
                whole.setdefault(wide, {})[language] = month  # 'červen' is June, though 'červenec' starts so
                for end in range(min(3, len(wide)), min(len(wide), MAX_TOKEN) + 1):
                    prefixes.setdefault(wide[:end], {}).setdefault(language, set()).add(month)
    _release_cldr()
    unique = {
        prefix: {language: next(iter(months)) for language, months in by_language.items() if len(months) == 1}
        for prefix, by_language in prefixes.items()
    }
    return MonthNames(whole, {prefix: found for prefix, found in unique.items() if found})


def _release_cldr() -> None:
    """Babel keeps every locale it has read (70 MiB for these 80, in a preview's or an import's
    process); the month names are copied out, so its caches are let go. They are private to Babel:
    a version without them keeps its data, nothing breaks."""
    from babel import localedata

    for name in ("_cache", "_dict_cache"):
        cache = getattr(localedata, name, None)
        if isinstance(cache, dict):
            cache.clear()


def readings(token: str) -> dict[str, int]:
    """Every language in which `token` names a month, and that month (empty: no language)."""
    text = key(token)
    if not text or len(text) > MAX_TOKEN:
        return {}
    names = month_names()
    found = dict(names.prefixes.get(text, {}))
    found.update(names.whole.get(text, {}))  # a whole name of the language outranks a prefix
    return found


class MonthReader:
    """Reads one file's month tokens: the languages still possible narrow with each token read, and a
    token is read only when every language still possible gives it the same month."""

    def __init__(self) -> None:
        self.languages: set[str] | None = None  # None: no token read yet
        # tokens read: the languages only narrow, and all those left gave the token this month
        self._read: dict[str, int] = {}

    def month(self, token: str) -> int:
        """The month (1 to 12), or ValueError saying why not (no language has it; the languages disagree)."""
        known = self._read.get(token)
        if known is not None:
            return known
        found = readings(token)
        possible = {language: month for language, month in found.items() if self._still(language)}
        if "AMERICAN" in possible:  # the default NLS_DATE_LANGUAGE: 'MAR' is March, not Finnish 'marras'
            possible = {language: month for language, month in possible.items() if month == possible["AMERICAN"]}
        if not found:
            raise ValueError(f"'{token}' is not a month name in any language of Oracle's NLS_DATE_LANGUAGE")
        if not possible:
            raise ValueError(f"'{token}' is not a month in {self.language}, the language of the file's other dates")
        months = set(possible.values())
        if len(months) > 1:
            by_month = ", ".join(
                f"{_month_word(month)} in {' and '.join(sorted(lang for lang, m in possible.items() if m == month))}"
                for month in sorted(months)
            )
            raise ValueError(f"'{token}' is {by_month}, and the file's dates read so far do not tell which")
        self.languages = set(possible)
        month = months.pop()
        if len(self._read) < 1000:
            self._read[token] = month
        return month

    @property
    def english(self) -> bool:
        """Whether AMERICAN is still possible: then an English abbreviation is read as English."""
        return self.languages is None or "AMERICAN" in self.languages

    def _still(self, language: str) -> bool:
        return self.languages is None or language in self.languages

    @property
    def language(self) -> str | None:
        """The languages the tokens read leave possible, as the note says them: 'RUSSIAN',
        'BULGARIAN, MACEDONIAN or RUSSIAN', 'DUTCH, ENGLISH, FRENCH or 11 others'."""
        if not self.languages:
            return None
        names = sorted(self.languages)
        if len(names) == 1:
            return names[0]
        if len(names) <= 4:
            return f"{', '.join(names[:-1])} or {names[-1]}"
        return f"{', '.join(names[:3])} or {len(names) - 3} others"


def _month_word(month: int) -> str:
    return calendar.month_name[month]  # the C locale's English name, for the message


def resolve(tokens: list[str]) -> tuple[list[int], str | None]:
    """The months of several tokens of one file read together: a token ambiguous alone is read by the
    language the others settle (ValueError when they do not). Also returns the language when known."""
    reader = MonthReader()
    for token in tokens:  # narrow the languages by every token first, then read each
        found = readings(token)
        if found and (reader.languages is None or reader.languages & set(found)):
            narrowed = set(found) if reader.languages is None else reader.languages & set(found)
            reader.languages = narrowed
    months = [reader.month(token) for token in tokens]
    return months, reader.language
