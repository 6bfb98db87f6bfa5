-- redolab-script: oracle_redo_logs
-- Online and standby redo log groups per thread (V$STANDBY_LOG has no member count).
PROMPT redolab-step: redo_logs
SELECT 'ONLINE' AS log_type, thread#, group#, bytes, members, status
  FROM v$log
UNION ALL
SELECT 'STANDBY', thread#, group#, bytes, TO_NUMBER(NULL), status
  FROM v$standby_log
 ORDER BY 1, 2, 3;
