"""Level 4 (with runs): redo history, from upload to requirement. uploads (stored files and the
preview), ingest/ (reader, mapping, aliases, values, pipeline) and parsers/ (one module per input
family), dedupe, bounds, service (the staged, all-or-nothing import), imports (inline or as a job),
analytics, requirement (per thread and summed, with each figure's basis), windows (peak windows),
stored (the stored analysis's forms and chart data), analysis (its writer and its one reader),
api. Imports core, auth, environments and jobs."""
