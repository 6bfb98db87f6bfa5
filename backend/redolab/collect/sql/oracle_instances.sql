-- redolab-script: oracle_instances
-- The instances of a RAC database (one row for a single instance); THREAD# is each one's redo thread.
PROMPT redolab-step: instances
SELECT inst_id, instance_number, instance_name, host_name, thread#, status, version
  FROM gv$instance
 ORDER BY inst_id;
