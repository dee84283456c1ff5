"""The authority on a hand-checked ledger: every rule, both deciding rules and the threshold edge."""

from __future__ import annotations

from decimal import Decimal

import pytest
from us_sut_reconciliation_v1.ledger import Quarter
from us_sut_reconciliation_v1.prompt import read_ledger
from us_sut_reconciliation_v1.rules import LOCAL_RATES, combined_rate, reconcile, tax_at

# Business ZIP 88001 (combined 8.25%); 88029 is 8.75%, 88011 7.75%, 88040 7.50%, 88063 6.25%.
PROMPT = """Business: Test Traders, Lone Pine Central, State of Lone Pine
Business ZIP: 88001
Filing quarter: 2025 Q2 (2025-04-01 to 2025-06-30)
Ledger (18 rows):
```csv
transaction_id,invoice_number,date,type,category,gross_amount,tax_collected_or_paid,jurisdiction_zip,tax_exempt_claimed,customer_or_vendor_cert_id
txn_001,INV-1,2025-04-02,sale,electronics,100.00,8.25,88001,false,
txn_002,INV-2,2025-04-03,sale,furniture,200.00,16.50,88029,false,
txn_003,INV-3,2025-04-04,sale,clothing,200.00,12.50,88029,false,
txn_004,INV-4,2025-04-05,sale,unprepared_grocery,50.00,4.13,88001,false,
txn_005,INV-5,2025-04-06,sale,software,200.00,0.00,88011,true,
txn_006,INV-6,2025-04-07,sale,software,200.01,0.00,88011,true,
txn_007,INV-7,2025-04-08,sale,general_merchandise,1000.00,0.00,88040,true,RC-123456
txn_008,INV-8,2025-04-09,sale,general_merchandise,1000.00,75.00,88040,true,RC-654321
txn_009,INV-1,2025-04-10,sale,electronics,100.00,8.25,88001,false,
txn_010,INV-10,2025-07-01,sale,electronics,40.00,3.30,88001,false,
txn_011,PO-1,2025-04-11,purchase,office_supplies,500.00,0.00,88001,false,
txn_012,PO-2,2025-04-12,purchase,office_supplies,500.00,41.25,88001,false,
txn_013,PO-3,2025-04-13,purchase,medical_device,500.00,0.00,88001,false,
txn_014,PO-4,2025-04-14,purchase,industrial_equipment,300.00,0.00,88001,true,RC-777777
txn_015,PO-5,2025-04-15,purchase,industrial_equipment,300.00,0.00,88001,true,
txn_016,PO-6,2025-03-31,purchase,software,100.00,0.00,88001,false,
txn_017,INV-17,2025-04-16,sale,prescription_drug,300.00,0.00,88001,true,
txn_018,INV-18,2025-04-17,sale,clothing,2.00,0.13,88063,false,
```"""


def test_hand_checked_ledger() -> None:
    quarter, business_zip, rows = read_ledger(PROMPT)
    assert (quarter, business_zip, len(rows)) == (Quarter(2025, 2), "88001", 18)
    key = reconcile(quarter, business_zip, rows)
    assert key.figures == {
        "gross_sales": 325201,  # ten included sales; 009 (duplicate) and 010 (July) left out
        "exempt_sales": 255000,  # 004, 005 (claim at the threshold), 007, 008, 017
        "taxable_sales": 70201,
        "sales_tax_due": 5888,  # 8.25 + 17.50 + 17.50 + 15.50 (006, claim not honoured) + 0.13
        "use_tax_due": 6600,  # 011 untaxed 41.25 + 015 claim not honoured 24.75
        "net_remittance": 12488,
    }
    assert key.faults == {
        "txn_002": ("nexus_misallocation",),  # 16.50 is 8.25% of 200: the business ZIP's rate
        "txn_003": ("tax_miscalculated",),  # 12.50 is the state rate alone
        "txn_004": ("tax_on_exempt_item",),
        "txn_006": ("missing_exemption_cert",),  # 200.01 > 200.00; no tax check on top
        "txn_008": ("tax_on_exempt_item",),  # a certified resale is exempt, so its tax is a fault
        "txn_009": ("duplicate_invoice",),
        "txn_010": ("outside_period",),
        "txn_015": ("missing_exemption_cert",),
        "txn_016": ("outside_period",),
    }


def test_tax_rounds_half_up_per_line() -> None:
    assert tax_at(Decimal("2.00"), Decimal("6.25")) == Decimal("0.13")  # 0.125, half-even would give 0.12
    assert tax_at(Decimal("100.00"), Decimal("8.25")) == Decimal("8.25")
    assert tax_at(Decimal("200.01"), Decimal("7.75")) == Decimal("15.50")  # 15.500775


def test_rate_table() -> None:
    assert len(LOCAL_RATES) >= 12
    assert combined_rate("88001") == Decimal("8.25")
    with pytest.raises(ValueError, match="88999"):
        combined_rate("88999")


def test_nexus_wins_over_miscalculated_and_needs_a_different_destination() -> None:
    header, _, _ = PROMPT.partition("txn_001")
    row = "txn_001,INV-1,2025-04-02,sale,electronics,100.00,{tax},{zip},false,\n```"
    origin_at_home = read_ledger(header + row.format(tax="8.25", zip="88001"))
    assert reconcile(*origin_at_home).faults == {}
    origin_elsewhere = read_ledger(header + row.format(tax="8.25", zip="88070"))
    assert reconcile(*origin_elsewhere).faults == {"txn_001": ("nexus_misallocation",)}
    off_by_a_cent = read_ledger(header + row.format(tax="8.24", zip="88001"))
    assert reconcile(*off_by_a_cent).faults == {"txn_001": ("tax_miscalculated",)}


def test_unknown_zip_and_malformed_ledger_are_errors() -> None:
    with pytest.raises(ValueError):
        reconcile(*read_ledger(PROMPT.replace("88029", "99999")))
    with pytest.raises(ValueError, match="tax_exempt_claimed"):
        read_ledger(PROMPT.replace("88001,false,", "88001,maybe,"))
    with pytest.raises(ValueError):
        read_ledger(PROMPT.replace("Business ZIP", "Business zip"))
