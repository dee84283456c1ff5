"""Reading untrusted text: a model's reply, money, the ledger tables, and JSON or TOML within bounds.

- `bounded_decode` decodes JSON and TOML within limits on size and nesting;
- `answer` pulls the last ``<answer>`` block out of a reply and reads JSON from it;
- `money` turns money text into exact cents, and back;
- `table` is the strict CSV codec of the generated ledgers.

Layer 0: imports nothing of piv_core.
"""
