"""beancount-ledger: multi-turn bank reconciliation on a Beancount ledger, scored deterministically."""

from beancount_ledger.answer import golden_ledger
from beancount_ledger.harness import LedgerHarness
from beancount_ledger.taskset import LedgerConfig, LedgerData, LedgerTask, LedgerTaskset

__all__ = ["LedgerConfig", "LedgerData", "LedgerHarness", "LedgerTask", "LedgerTaskset", "golden_ledger"]
