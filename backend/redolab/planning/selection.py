"""Which evidence the plan uses: the imports, runs and rehearsals chosen, and the run tags left out."""

from __future__ import annotations

from dataclasses import dataclass

from redolab.planning.rehearsal_card import RehearsalFact
from redolab.planning.wording import LOAD_SHARED
from redolab.runs.loaded import LOAD
from redolab.runs.measured import MeasuredRun
from redolab.runs.models import RunStatus

# Left out unless the user unticks them: the ASYNC load beside a SYNC run under load shared its path with
# that SYNC run, so its throughput is not what the link carries for redo alone (runs.loaded)
DEFAULT_EXCLUDED_TAGS = frozenset({LOAD})


@dataclass(frozen=True)
class Selection:
    """Which evidence the plan uses. None: the default (every import; every run except loopback ones and
    load runs). A run tagged with an excluded tag is left out; a loopback run is used only when named in
    `runs`."""

    imports: frozenset[int] | None = None
    runs: frozenset[int] | None = None
    exclude_tags: frozenset[str] = DEFAULT_EXCLUDED_TAGS
    rehearsals: frozenset[int] | None = None

    @classmethod
    def parse(cls, *, chosen: bool, imports, runs, exclude_tags=(), rehearsals=()) -> Selection:
        """From a form or a query: when `chosen` the lists are complete (nothing ticked: nothing used), the
        tags too (the form shows the default ones ticked); otherwise the default tags are left out as well."""
        tags = frozenset(t for t in exclude_tags if t)
        return cls(
            frozenset(imports) if chosen or imports else None,
            frozenset(runs) if chosen or runs else None,
            tags if chosen else tags | DEFAULT_EXCLUDED_TAGS,
            frozenset(rehearsals) if chosen or rehearsals else None,
        )

    def rehearsal_choice(self, fact: RehearsalFact) -> tuple[bool, str]:
        """(used, why) for one rehearsal: over the link and at recorded speed by default."""
        if self.rehearsals is not None:
            return (True, "chosen") if fact.id in self.rehearsals else (False, "not chosen")
        if fact.status != RunStatus.succeeded.value:
            return False, f"{fact.status}: the replay did not run to its end; tick it to use it anyway"
        if fact.loopback:
            return False, "not the link: both ends on this machine (loopback); tick it to use it anyway"
        if fact.compressed:
            return False, f"time compressed {fact.speedup:g}x, a quick look; tick it to use it anyway"
        return True, "used"

    def run_choice(self, run: MeasuredRun) -> tuple[bool, str]:
        """(used, why) for one run."""
        excluded = sorted(set(run.tags) & self.exclude_tags)
        if excluded:
            why = f"left out: tagged {', '.join(excluded)}"
            if LOAD in excluded:
                why += f" ({LOAD_SHARED}; untick {LOAD} under 'Leave out runs tagged' to use it)"
            return False, why
        if self.runs is not None:
            if run.id in self.runs:
                if run.loopback:
                    return True, (
                        "chosen (loopback: this machine, not the link): it stands in only where no run over the link "
                        "measured the same, capped at the nominal link, and the cards using it say 'loopback'"
                    )
                return True, "chosen"
            return False, "not chosen"
        if run.loopback:
            return False, "not the link: both ends on this machine (loopback); tick it to use it anyway"
        return True, "used"

    @property
    def query(self) -> str:
        """The selection as the page's and the API's query string (empty for the default evidence: without
        `chosen` the default tags are left out anyway, so they are not named)."""
        parts = []
        chosen = self.imports is not None or self.runs is not None or self.rehearsals is not None
        if chosen:
            parts.append("chosen=1")
            parts += [f"import={i}" for i in sorted(self.imports or ())]
            parts += [f"run={i}" for i in sorted(self.runs or ())]
            parts += [f"rehearsal={i}" for i in sorted(self.rehearsals or ())]
        tags = self.exclude_tags if chosen else self.exclude_tags - DEFAULT_EXCLUDED_TAGS
        parts += [f"exclude_tag={t}" for t in sorted(tags)]
        return "&".join(parts)
