"""The ledger-audit task family the tax environments share.

- `audit` is the fault map an answer lists its findings in, and pair-level precision / recall / F1;
- `plan` plants faults in a generated ledger: which rows, invoice numbers, duplicate bookings;
- `grading` holds the answer key, reads a reply and grades it, with per-skill metrics.

Layer 1: imports `parsing` and `compat`.
"""
