"""us-sut-reconciliation-v1: a sales & use tax ledger to a corrected quarterly return, with a fault audit."""

from piv_core.runtime import SingleReplyHarness

from us_sut_reconciliation_v1.taskset import UsSutConfig, UsSutData, UsSutTask, UsSutTaskset

__all__ = ["SingleReplyHarness", "UsSutConfig", "UsSutData", "UsSutTask", "UsSutTaskset"]
