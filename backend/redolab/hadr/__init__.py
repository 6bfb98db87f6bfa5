"""Level 6: Db2 HADR: db2pd captures (parser, models, service, api) and calculator (the
hadrCalculator view: every interval of log history against every sync mode). Imports levels 0-5
(the disk fit, runs, redo history)."""
