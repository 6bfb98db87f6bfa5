"""Writes the DMA collector fixtures of tests/redo/test_dma.py in the shape the collector's output
writer produces (python3 tests/redo/make_dma_fixtures.py): SQL*Plus spools of the 2.0.x select
expressions (a blank first line, the expression's text without spaces as the heading, cut after 199
characters, ' , ' between fields up to 2.0.3 and ';' in 2.0.5/2.0.6, CRLF when spooled on Windows,
numbers as SQL*Plus writes them: '.0001', 30 decimals), and collector 1.x's percentile pivot."""

from pathlib import Path

OUT = Path(__file__).parents[1] / "fixtures" / "redo" / "collectors"
ORDER = [
    "PKEY",
    "DBID",
    "INSTANCE_NUMBER",
    "HOUR",
    "METRIC_NAME",
    "METRIC_UNIT",
    "AVG_VALUE",
    "MODE_VALUE",
    "MEDIAN_VALUE",
    "MIN_VALUE",
    "MAX_VALUE",
    "SUM_VALUE",
    "PERC50",
    "PERC75",
    "PERC90",
    "PERC95",
    "PERC100",
]
METRICS = [
    ("Average Active Sessions", "Active Sessions", 30.0),
    ("Redo Generated Per Sec", "Bytes Per Second", 4.0e6),
    ("User Transaction Per Sec", "Transactions Per Second", 55.0),
]


def redo_rate(inst, hour):
    return (2_000_000 + 150_000 * hour) * (1.0 if inst == 1 else 0.5)


def rows(pkey, instances):
    out = []
    for inst in instances:
        for name, unit, base in METRICS:
            for hour in range(24):
                if name.startswith("Redo"):
                    avg = redo_rate(inst, hour)
                    mx = avg * 2.5
                    p95 = avg * 1.8
                else:
                    avg = base * (1 + hour / 48)
                    mx = avg * 3
                    p95 = avg * 2
                vals = [
                    pkey,
                    "2832815016",
                    str(inst),
                    f"{hour:02d}",
                    name,
                    unit,
                    f"{avg + 0.364774366698229321687:.30f}".rstrip("0"),
                    "0",
                    f"{avg * 0.9:.13f}",
                    f".{hour + 1:04d}",
                    f"{mx:.9f}",
                    f"{avg * 54:.20f}",
                    f"{avg * 0.9:.13f}",
                    f"{avg * 1.2:.15f}",
                    f"{p95 * 0.95:.11f}",
                    f"{p95:.10f}",
                    f"{mx:.9f}",
                ]
                out.append(vals)
    return out


# 2.0.1 to 2.0.3: SELECT pkey ||' , '|| dbid ... ; Oracle names the column by the expression without its spaces
h = ("PKEY||','||" + "||','||".join(ORDER[1:]))[:199]
lines = ["", h] + [" , ".join(r) for r in rows("dbhost02_ORCL_091021164353", [1, 2])]
(OUT / "opdb__awrhistsysmetrichist__190_2.0.1_dbhost02.ORCL.ORCL1.091021164353.log").write_text("\n".join(lines) + "\n")
# 2.0.5 / 2.0.6: '&&colspr' is ';'; spooled on Windows: CRLF
h = ("PKEY||';'||" + "||';'||".join(ORDER[1:]))[:199]
lines = ["", h] + [";".join(r) for r in rows("dbhost03_ORCL_061022120000", [1, 2])]
(OUT / "opdb__awrhistsysmetrichist__122_2.0.5_dbhost03.ORCL.ORCL1.061022120000.log").write_bytes(
    ("\r\n".join(lines) + "\r\n").encode()
)
# 1.x: opdbt__awrhistsysmetrichist_rs: the hourly p90 and p95 of each metric pivoted into columns
RS = [
    "_PKEY",
    "_CON_ID",
    "_DBID",
    "_INSTANCE_NUMBER",
    "_HO",
    "AAS_PERC90",
    "BKGRCPU_PER_SEC_PERC90",
    "CPU_PER_SEC_PERC90",
    "EXEC_PER_SEC_PERC90",
    "HOST_CPU_PER_SEC_PERC90",
    "IOMBPS_PERC90",
    "IOPS_PERC90",
    "LOG_READS_PER_TXN_PERC90",
    "LOGONS_PER_SEC_PERC90",
    "PHY_READS_PER_SEC_PERC90",
    "PHY_WRITES_PER_SEC_PERC90",
    "REDO_GEN_PER_SEC_PERC90",
    "SQL_RT_PERC90",
    "USERCALLS_PER_SEC_PERC90",
    "USER_TX_PER_SEC_PERC90",
    "AAS_PERC95",
    "BKGRCPU_PER_SEC_PERC95",
    "CPU_PER_SEC_PERC95",
    "EXEC_PER_SEC_PERC95",
    "HOST_CPU_PER_SEC_PERC95",
    "IOMBPS_PERC95",
    "IOPS_PERC95",
    "LOG_READS_PER_TXN_PERC95",
    "LOGONS_PER_SEC_PERC95",
    "PHY_READS_PER_SEC_PERC95",
    "PHY_WRITES_PER_SEC_PERC95",
    "REDO_GEN_PER_SEC_PERC95",
    "SQL_RT_PERC95",
    "USERCALLS_PER_SEC_PERC95",
    "USER_TX_PER_SEC_PERC95",
]
lines = ['""', ",".join(RS)]
for inst in (1, 2):
    for hour in range(24):
        row = {c: "0" for c in RS}
        row.update(
            {
                "_PKEY": "dbhost04_ORCL_132841",
                "_CON_ID": "0",
                "_DBID": "2832984852",
                "_INSTANCE_NUMBER": str(inst),
                "_HO": str(hour),
            }
        )
        p95 = round(redo_rate(inst, hour) * 1.8)
        row["REDO_GEN_PER_SEC_PERC95"], row["REDO_GEN_PER_SEC_PERC90"] = str(p95), str(round(p95 * 0.8))
        row["LOG_READS_PER_TXN_PERC90"], row["LOG_READS_PER_TXN_PERC95"] = str(2000 + hour * 37), str(6000 + hour * 41)
        row["EXEC_PER_SEC_PERC95"], row["IOPS_PERC95"] = str(11 + hour % 6), str(5 + hour % 5)
        lines.append(",".join(row[c] for c in RS))
(OUT / "opdbt__awrhistsysmetrichist_rs__dbhost04.ORCL.ORCL1.132841.log").write_text("\n".join(lines) + "\n")
