"""Level 5: log-disk tests (`redoprobe disk` at several write sizes) as jobs, and fit (the disk
model: time = size / rate + overhead). Imports levels 0-4."""
