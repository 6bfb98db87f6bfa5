-- redolab-script: oracle_archived_log_names
-- The archived logs still on disk at the local destinations (TARGET PRIMARY) over the last NAMES_DAYS
-- days, with their names, for the compressibility step: redolab picks a few logs of the worst hour and
-- of a typical hour and reads them on the host, read-only. A name starting with '+' is stored in ASM.
PROMPT redolab-step: archived_log_names
SELECT thread#, sequence#, first_time, next_time, blocks, block_size, name
  FROM v$archived_log
 WHERE standby_dest = 'NO'
   AND status = 'A'
   AND name IS NOT NULL
   AND dest_id IN (SELECT dest_id FROM v$archive_dest WHERE target = 'PRIMARY')
   AND next_time >= SYSDATE - &names_days
 ORDER BY first_time, thread#, sequence#;
