-- redolab-script: oracle_archived_log
-- The archived logs of the local destinations (TARGET PRIMARY, not those shipped to a standby) after
-- redolab's watermark. The watermark arrives as SQL*Plus substitution variables that redolab DEFINEs
-- from integers it validated (never from text): RESETLOGS_ID, the incarnation the watermark belongs to
-- (0: none), and up to 32 pairs THREAD_nn, AFTER_nn: the last sequence already imported for that thread
-- (an unused pair is thread 0, which no log has). A thread without a pair, or another incarnation,
-- starts from its first log. SINCE_DAYS bounds the first collection.
PROMPT redolab-step: archived_log
SELECT thread#, sequence#, resetlogs_id, dest_id, first_time, next_time, blocks, block_size
  FROM v$archived_log
 WHERE standby_dest = 'NO'
   AND dest_id IN (SELECT dest_id FROM v$archive_dest WHERE target = 'PRIMARY')
   AND next_time >= SYSDATE - &since_days
   AND sequence# > CASE WHEN resetlogs_id = &resetlogs_id
                        THEN DECODE(thread#,
                               &thread_01, &after_01,
                               &thread_02, &after_02,
                               &thread_03, &after_03,
                               &thread_04, &after_04,
                               &thread_05, &after_05,
                               &thread_06, &after_06,
                               &thread_07, &after_07,
                               &thread_08, &after_08,
                               &thread_09, &after_09,
                               &thread_10, &after_10,
                               &thread_11, &after_11,
                               &thread_12, &after_12,
                               &thread_13, &after_13,
                               &thread_14, &after_14,
                               &thread_15, &after_15,
                               &thread_16, &after_16,
                               &thread_17, &after_17,
                               &thread_18, &after_18,
                               &thread_19, &after_19,
                               &thread_20, &after_20,
                               &thread_21, &after_21,
                               &thread_22, &after_22,
                               &thread_23, &after_23,
                               &thread_24, &after_24,
                               &thread_25, &after_25,
                               &thread_26, &after_26,
                               &thread_27, &after_27,
                               &thread_28, &after_28,
                               &thread_29, &after_29,
                               &thread_30, &after_30,
                               &thread_31, &after_31,
                               &thread_32, &after_32,
                               0)
                        ELSE 0 END
 ORDER BY thread#, sequence#, dest_id;
