#!/usr/bin/env python3
"""The named columns of one CSV file of two output folders are the same text, row by row.
usage: same_columns.py FOLDER_A FOLDER_B FILE COLUMN...

For totals that are exact whatever the decomposition (a body's force: integer sums in
fixed point) beside others that are not (the mass: floating-point sums per block), so
the files as a whole differ in the last bits between decompositions."""
import csv
import os
import sys

a_folder, b_folder, name, columns = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
tables = []
for folder in (a_folder, b_folder):
    with open(os.path.join(folder, name)) as f:
        tables.append(list(csv.DictReader(f)))
a, b = tables
if len(a) != len(b) or not a:
    print("same_columns: FAILED: %s has %d rows in %s, %d in %s" % (name, len(a), a_folder, len(b), b_folder))
    sys.exit(1)
for i, (ra, rb) in enumerate(zip(a, b)):
    for c in ["step"] + columns:
        if c not in ra or c not in rb or ra[c] != rb[c]:
            print("same_columns: FAILED: row %d, column %s: %s against %s"
                  % (i + 1, c, ra.get(c), rb.get(c)))
            sys.exit(1)
print("same_columns: %s: %s the same in %d rows" % (name, ", ".join(columns), len(a)))
