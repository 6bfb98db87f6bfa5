"""Level 7: the plan. Pure: network (BDP, 3 x BDP buffers), instantiation, transport (verdicts, lag and
SYNC models), settings (snippets per platform), facts (the environment and the chosen runs),
results (each card's typed result, computed once), writer (the one place cards are worded), card,
plan (build_plan). Then service (evidence chosen -> plan), report (JSON, HTML, PDF) and api.
Imports every level below (redo's requirement, runs, disktest, hadr), never web/."""
