-- redolab-script: oracle_size
-- The size an instantiation copies. In a CDB's root DBA_DATA_FILES lists the root's files only;
-- V$DATAFILE (from the control file) lists every container's.
PROMPT redolab-step: size
SELECT (SELECT NVL(SUM(bytes), 0) FROM dba_data_files) AS datafile_bytes,
       (SELECT NVL(SUM(bytes), 0) FROM dba_temp_files) AS tempfile_bytes,
       (SELECT NVL(SUM(bytes), 0) FROM v$datafile) AS controlfile_datafile_bytes
  FROM dual;
