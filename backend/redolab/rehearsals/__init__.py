"""Level 5, with sweeps and charts (a rehearsal is runs with a schedule, queued together): what to replay
of a customer's own redo and the schedule the probe replays it from (window, schedule: pure), and the
rehearsal's rows, service and API. The model's prediction is planning.rehearsal_model (the lag replay
is the plan's, a level above)."""
