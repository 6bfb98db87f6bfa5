-- redolab-script: oracle_awr
-- AWR history (Diagnostics Pack licence): run only when the environment says the pack is licensed.
-- AWR_DAYS (an integer redolab validated) bounds the period. Column names are those the redo import
-- reads: the per-snapshot average and maximum of 'Redo Generated Per Sec' (bytes per second), and the
-- per-snapshot deltas of the cumulative 'redo size' (bytes) and 'redo writes' counters, per startup so
-- that a restart does not make a negative delta.
PROMPT redolab-step: awr_sysmetric
SELECT s.begin_time, s.end_time, s.instance_number, s.metric_name, s.average, s.maxval
  FROM dba_hist_sysmetric_summary s
 WHERE s.dbid = (SELECT dbid FROM v$database)
   AND s.metric_name = 'Redo Generated Per Sec'
   AND s.end_time >= SYSDATE - &awr_days
 ORDER BY s.instance_number, s.begin_time;
PROMPT redolab-step: awr_sysstat
SELECT snap_id, instance_number, begin_interval_time, end_interval_time, stat_name, value
  FROM (SELECT sn.snap_id, sn.instance_number, CAST(sn.begin_interval_time AS DATE) AS begin_interval_time,
               CAST(sn.end_interval_time AS DATE) AS end_interval_time, st.stat_name,
               st.value - LAG(st.value) OVER (PARTITION BY st.instance_number, st.stat_name, sn.startup_time
                                              ORDER BY sn.snap_id) AS value
          FROM dba_hist_sysstat st
          JOIN dba_hist_snapshot sn
            ON sn.dbid = st.dbid AND sn.instance_number = st.instance_number AND sn.snap_id = st.snap_id
         WHERE st.dbid = (SELECT dbid FROM v$database)
           AND st.stat_name IN ('redo size', 'redo writes')
           AND sn.end_interval_time >= SYSDATE - &awr_days)
 WHERE value IS NOT NULL
 ORDER BY instance_number, snap_id, stat_name;
