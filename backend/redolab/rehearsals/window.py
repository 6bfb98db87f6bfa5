"""What a rehearsal replays (pure): the worst N minutes of the stored redo, or a period the user names.

The worst N-minute window is the best window (redo.windows.best_window) of the summed series over the
spans where every timed thread has data: the same series and spans as the plan's peak windows. Each
thread's replay series (ThreadNeed.replay: its finest series with times) is what is replayed; its
granularity (a log, a snapshot, an hour) is said with the window, because bytes inside one piece are
spread evenly and a burst shorter than a piece is not in the replay.
Units: seconds, bytes per second; times are aware datetimes (UTC in the requirement).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from redolab.core import fields
from redolab.core.units import format_duration, wall_clock
from redolab.redo.analytics import summed_pieces
from redolab.redo.bounds import EARLIEST, LATEST
from redolab.redo.requirement import Requirement, ThreadNeed
from redolab.redo.windows import Segment, best_window

WORST_MINUTES = {"worst-60m": 60, "worst-15m": 15, "worst-5m": 5, "worst-1m": 1}
DEFAULT_SPEC = "worst-60m"
MIN_WINDOW_SECONDS = 60.0  # shorter: TCP has not left slow start, the lag says nothing
MAX_WINDOW_SECONDS = 86400.0  # longer: a run the size of a day of redo is a migration, not a rehearsal
PROFILE_REFUSAL = (
    "an hour-of-day profile has no sequence and cannot be replayed; import archived-log history "
    "(V$ARCHIVED_LOG) or AWR snapshots instead"
)
_SPEC_HELP = (
    "use worst-60m, worst-15m, worst-5m, worst-1m, or a period FROM..TO in ISO time, "
    "e.g. 2025-03-04T14:00Z..2025-03-04T15:00Z"
)

Period = tuple[datetime, datetime]
WindowSpec = str | Period  # "worst-60m" (one of WORST_MINUTES) or (start, end), aware datetimes


class RehearsalRefused(ValueError):
    """What cannot be rehearsed, and what would work, in words for the user; `field` names the
    request's field at fault (the window unless said)."""

    def __init__(self, message: str, *, field: str = "window") -> None:
        super().__init__(message)
        self.field = field


class WindowSpecError(RehearsalRefused):
    """A window the user typed that cannot be read; the message names the field."""


@dataclass(frozen=True)
class Window:
    """The stretch of redo a rehearsal replays, and how finely the data describe it."""

    start: datetime
    end: datetime
    kind: str  # "worst" (the worst N minutes) or "period" (named by the user)
    label: str  # "worst 60 minutes, 2025-03-04 14:00 to 15:00 UTC"
    granularity_seconds: float | None  # the usual length of one piece of the replay series
    granularity: str  # what that means for the replay, in words
    statistic: str  # of the replay basis, e.g. "per-log rate"
    threads: tuple[int, ...]  # thread numbers in the replay, ascending (connection i = threads[i])
    bytes_per_second: float  # the average of the threads added up over the window
    notes: tuple[str, ...] = ()  # what is left out or thin, in words

    @property
    def seconds(self) -> float:
        # through UTC: ends sharing one zone subtract as wall-clock times, blind to a daylight-saving change
        return (self.end.astimezone(UTC) - self.start.astimezone(UTC)).total_seconds()


def parse_window_spec(text: str, *, zone: str = "UTC") -> WindowSpec:
    """ "worst-60m" (and -15m, -5m, -1m), or "FROM..TO" in ISO 8601; a time without an offset is read
    on the database's clock `zone` (an IANA name). Empty text: the default, worst-60m."""
    spec = (text or "").strip()
    if not spec:
        return DEFAULT_SPEC
    if spec.lower() in WORST_MINUTES:
        return spec.lower()
    if spec.lower().startswith("worst"):
        raise WindowSpecError(f"window: {spec!r} is not offered; {_SPEC_HELP}")
    if spec.count("..") != 1:
        raise WindowSpecError(f"window: {spec!r} is neither a worst window nor a period FROM..TO; {_SPEC_HELP}")
    written = [part.strip() for part in spec.split("..")]
    first, last = _moment(written[0], "start", zone), _moment(written[1], "end", zone)
    if last <= first:
        raise WindowSpecError(
            f"window: the end {written[1]!r} ({last.isoformat()}) is not after the start {written[0]!r} "
            f"({first.isoformat()}); give an end later than the start"
        )
    return first, last


def _moment(text: str, name: str, zone: str) -> datetime:
    """The instant `text` names, in UTC: an aware time on one clock whatever the zone, because two times
    sharing one ZoneInfo are subtracted and compared as wall-clock times, blind to a daylight-saving change."""
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        raise WindowSpecError(f"window {name}: {text!r} is not an ISO time; {_SPEC_HELP}") from None
    local = moment.tzinfo is None
    if local:
        try:
            moment = moment.replace(tzinfo=ZoneInfo(zone))
        except (ZoneInfoNotFoundError, ValueError):
            raise WindowSpecError(f"window {name}: {text!r} has no UTC offset; add one, e.g. Z or +01:00") from None
    try:  # year 1 or 9999 with an offset leaves datetime's range when written on another clock
        inside = EARLIEST <= moment.astimezone(UTC) < LATEST
    except (OverflowError, ValueError):
        inside = False
    if not inside:
        raise WindowSpecError(
            f"window {name}: {text!r} is outside the years {fields.FIRST_YEAR} to {fields.LAST_YEAR}, "
            "where redo history has its times"
        )
    if local:
        _check_wall_clock(moment, text, name, zone)
    return moment.astimezone(UTC)


def _check_wall_clock(moment: datetime, text: str, name: str, zone: str) -> None:
    """Refuses a wall-clock time the zone's clock skips or shows twice at a daylight-saving change:
    read either way it would be an hour off, and nothing in the text says which the user meant."""
    earlier, later = moment.replace(fold=0).utcoffset(), moment.replace(fold=1).utcoffset()
    if earlier == later:
        return
    offsets = f"{_offset_text(earlier)} or {_offset_text(later)}"
    if moment.astimezone(UTC).astimezone(moment.tzinfo).replace(tzinfo=None) != moment.replace(tzinfo=None):
        raise WindowSpecError(
            f"window {name}: {text!r} does not exist on the {zone} clock (it skips that hour for daylight "
            f"saving time); give an offset ({offsets}, e.g. {text}{_offset_text(later)}) or another time"
        )
    raise WindowSpecError(
        f"window {name}: {text!r} happens twice on the {zone} clock (it goes back an hour for daylight saving "
        f"time, first at {_offset_text(earlier)}, then at {_offset_text(later)}); give the offset you mean, "
        f"e.g. {text}{_offset_text(earlier)}"
    )


def _offset_text(offset: timedelta | None) -> str:
    """A UTC offset as ISO 8601 writes it after a time: +02:00, -03:30."""
    minutes = round((offset or timedelta(0)).total_seconds() / 60)
    sign = "-" if minutes < 0 else "+"
    return f"{sign}{abs(minutes) // 60:02d}:{abs(minutes) % 60:02d}"


def choose_window(requirement: Requirement, spec: WindowSpec = DEFAULT_SPEC, *, zone: str = "UTC") -> Window:
    """The window to replay; `zone` (IANA) is the clock the label is written on. Raises
    RehearsalRefused (WindowSpecError for unreadable text) saying why and what would work."""
    if isinstance(spec, str):
        spec = parse_window_spec(spec, zone=zone)
    timed = {t: n for t, n in sorted(requirement.threads.items()) if n.timed}
    if not timed:
        raise RehearsalRefused(_no_times(requirement))
    if isinstance(spec, str):
        return _worst(requirement, timed, WORST_MINUTES[spec], zone)
    start, end = spec
    if start.tzinfo is None or end.tzinfo is None:
        raise WindowSpecError("window: a period's start and end need a time zone (aware datetimes)")
    # on one clock (UTC): ends sharing a zone would be measured in wall-clock time, an hour off across a DST change
    return _period(requirement, timed, start.astimezone(UTC), end.astimezone(UTC), zone)


def _no_times(requirement: Requirement) -> str:
    profiles = [n.thread for n in requirement.threads.values() if n.basis.statistic.startswith("hour-of-day")]
    if profiles and len(profiles) == len(requirement.threads):
        return f"nothing to replay: {PROFILE_REFUSAL}"
    said = (
        "nothing to replay: the redo history has no times (sizes without FIRST_TIME and NEXT_TIME), so "
        "nothing says when the redo was generated; import archived-log history (V$ARCHIVED_LOG) or AWR "
        "snapshots with their times"
    )
    return f"{said}; {PROFILE_REFUSAL}" if profiles else said


def summed_within(threads: dict[int, ThreadNeed], start: datetime, end: datetime) -> list[Segment]:
    """The threads' replay series clipped to [start, end) and added up over time (bytes/s)."""
    events: list[tuple[datetime, float]] = []
    for need in threads.values():
        for s, e, rate in clipped(need.replay, start, end):
            events += [(s, rate), (e, -rate)]
    return summed_pieces(events)


def clipped(segments: list[Segment], start: datetime, end: datetime) -> list[Segment]:
    """The pieces inside [start, end), cut at its edges."""
    out = []
    for s, e, rate in segments:
        s, e = max(s, start), min(e, end)
        if s < e:
            out.append((s, e, rate))
    return out


def _worst(requirement: Requirement, timed: dict[int, ThreadNeed], minutes: int, zone: str) -> Window:
    seconds = minutes * 60.0
    untimed = sorted(set(requirement.threads) - set(timed))
    if not requirement.spans and not untimed:
        raise RehearsalRefused(
            f"no stretch of {minutes} minutes where every thread has data: the threads' data do not overlap in "
            "time; name a period to replay what there is"
        )
    if not requirement.spans:
        raise RehearsalRefused(
            f"thread{'s' if len(untimed) > 1 else ''} {_listed(untimed)} {'have' if len(untimed) > 1 else 'has'} "
            "no times, so when all threads are at their worst together is unknown; import archived-log "
            "history with times for every thread, or name a period to replay the timed threads"
        )
    # the stored requirement keeps the spans without their summed series: add the threads up again
    series = [summed_within(timed, span.start, span.end) for span in requirement.spans]
    found = [w for w in (best_window(s, seconds) for s in series if s) if w]
    if not found:
        longest = max((s.end - s.start).total_seconds() for s in requirement.spans)
        raise RehearsalRefused(
            f"no stretch of {minutes} minutes where every thread has data (the longest is "
            f"{format_duration(longest)}); choose a shorter worst window or name a period"
        )
    rate, start = max(found, key=lambda w: w[0])
    end = start + timedelta(seconds=seconds)
    notes = [f"thread {t} has no times: not in the replay" for t in untimed]
    label = f"worst {minutes} minute{'s' if minutes > 1 else ''}, {_period_text(start, end, zone)}"
    return _window(timed, start, end, "worst", label, rate, notes)


def _period(
    requirement: Requirement, timed: dict[int, ThreadNeed], start: datetime, end: datetime, zone: str
) -> Window:
    seconds = (end - start).total_seconds()
    _check_length(seconds)
    inside = {t: n for t, n in timed.items() if clipped(n.replay, start, end)}
    if not inside:
        first = min(n.replay[0][0] for n in timed.values())
        last = max(n.replay[-1][1] for n in timed.values())
        raise RehearsalRefused(
            f"no redo with times from {_period_text(start, end, zone)}; the data with times run from "
            f"{_period_text(first, last, zone)}"
        )
    summed = summed_within(inside, start, end)
    rate = sum(r * (e - s).total_seconds() for s, e, r in summed) / seconds
    notes = [f"thread {t} has no data in the period: not in the replay" for t in sorted(set(timed) - set(inside))]
    notes += [f"thread {t} has no times: not in the replay" for t in sorted(set(requirement.threads) - set(timed))]
    covered = sum((e - s).total_seconds() for s, e, _ in summed)
    if covered < seconds * 0.99:
        notes.append(f"the data cover {format_duration(covered)} of the {format_duration(seconds)}; the rest is quiet")
    return _window(inside, start, end, "period", _period_text(start, end, zone), rate, notes)


def _check_length(seconds: float) -> None:
    if seconds > MAX_WINDOW_SECONDS:
        raise RehearsalRefused(
            f"window: {format_duration(seconds)} is longer than the {format_duration(MAX_WINDOW_SECONDS)} a "
            "rehearsal replays; choose a worst window or a shorter period"
        )
    if seconds < MIN_WINDOW_SECONDS:
        raise RehearsalRefused(
            f"window: {format_duration(seconds)} is shorter than {format_duration(MIN_WINDOW_SECONDS)}: too "
            "short for the link to show a lag; choose at least a minute"
        )


def _window(
    threads: dict[int, ThreadNeed], start: datetime, end: datetime, kind: str, label: str, rate: float, notes
) -> Window:
    bases = [n.replay_basis for n in threads.values() if n.replay_basis is not None]
    statistic = " and ".join(dict.fromkeys(b.statistic for b in bases)) or "series with times"
    granularity = max((b.interval_seconds for b in bases if b.interval_seconds), default=None)
    return Window(
        start=start,
        end=end,
        kind=kind,
        label=label,
        granularity_seconds=granularity,
        granularity=granularity_statement(statistic, granularity, (end - start).total_seconds()),
        statistic=statistic,
        threads=tuple(sorted(threads)),
        bytes_per_second=rate,
        notes=tuple(notes),
    )


# the replay statistic -> (how it is sampled, one sample); first match wins
_SAMPLES = (
    ("per-log-file", "per log file", "log file"),
    ("per-log", "per log", "log"),
    ("volume", "per period", "period"),
    ("snapshot", "per AWR snapshot", "snapshot"),
    ("sysmetric", "per SYSMETRIC interval", "interval"),
    ("interval", "per capture interval", "interval"),
)


def granularity_statement(statistic: str, granularity_seconds: float | None, window_seconds: float) -> str:
    """What the replay can and cannot show at the data's sampling, in words."""
    per, noun = next(((p, n) for key, p, n in _SAMPLES if key in statistic.lower()), ("per sample", "sample"))
    article = "an" if noun[0] in "aeiou" else "a"
    each = f" (~{format_duration(granularity_seconds)} each)" if granularity_seconds else ""
    said = (
        f"{per}{each}: bytes inside one {noun} are spread evenly; bursts shorter than {article} {noun} "
        "are not in the replay"
    )
    if granularity_seconds and window_seconds < granularity_seconds * 0.99:
        said += (
            f"; the window ({format_duration(window_seconds)}) is shorter than one {noun}, so it replays "
            f"{article} {noun}'s average (its bytes over its length), not its bursts"
        )
    return said


def _period_text(start: datetime, end: datetime, zone: str) -> str:
    """'2025-03-04 14:00 to 15:00 UTC' on the database's clock (the date again when the day changes); each
    end with its UTC offset when a daylight-saving change falls inside or an end is an hour the clock shows
    twice, where the wall clock alone misreads the length or the hour."""
    first, last = wall_clock(start, zone), wall_clock(end, zone)
    seconds = first.second or last.second or first.microsecond or last.microsecond
    clock = "%H:%M:%S" if seconds else "%H:%M"
    head = first.strftime(f"%Y-%m-%d {clock}")
    tail = last.strftime(clock if last.date() == first.date() else f"%Y-%m-%d {clock}")
    local = start.astimezone(ZoneInfo(zone)), end.astimezone(ZoneInfo(zone))
    if local[0].utcoffset() != local[1].utcoffset() or any(_shown_twice(t) for t in local):
        head, tail = f"{head} {_offset_text(local[0].utcoffset())}", f"{tail} {_offset_text(local[1].utcoffset())}"
    return f"{head} to {tail} {zone}"


def _shown_twice(local: datetime) -> bool:
    """Whether this local time's wall clock is in the hour a daylight-saving change repeats."""
    return local.replace(fold=1 - local.fold).utcoffset() != local.utcoffset()


def _listed(numbers) -> str:
    return ", ".join(map(str, numbers))
