"""au-bas-reconciliation-v1: Australian GST ledger to corrected BAS, with a fault audit."""

from piv_core.runtime import SingleReplyHarness

from au_bas_reconciliation_v1.taskset import AuBasConfig, AuBasData, AuBasTask, AuBasTaskset

__all__ = ["AuBasConfig", "AuBasData", "AuBasTask", "AuBasTaskset", "SingleReplyHarness"]
