"""The run record: its typed models (:mod:`plugins.record.models`), the entries for what ran
(:mod:`plugins.record.items`), the verdict's values it holds (:mod:`plugins.record.values`),
and reading, writing and the JSON Schema (:mod:`plugins.record.json_io`).

The package sits below every stage that makes or reads a record (run, verdict, outputs,
cli) and imports none of them; it reaches only pydantic, the standard library and
``suites.safe_json``.
"""

from extractbench.plugins.record.items import (
    Crash,
    ItemEntry,
    OtherTest,
    OutcomeCounts,
    RecordModel,
    outcome_counts,
)
from extractbench.plugins.record.json_io import (
    RecordError,
    dump_record,
    load_record,
    parse_record,
    record_schema,
)
from extractbench.plugins.record.models import (
    READABLE_VERSIONS,
    SCHEMA_VERSION,
    Aggregate,
    Baseline,
    Counts,
    Decision,
    GateEntry,
    LimitInfo,
    MergedShard,
    NotEvaluated,
    RescoreOf,
    RunRecord,
    Selection,
    SuiteInfo,
    VerdictEntry,
    item_counts,
    new_run_id,
)
from extractbench.plugins.record.values import (
    Comparison,
    GateSequence,
    RunOrder,
    SpeedChange,
    SpeedStats,
)

__all__ = [
    "SCHEMA_VERSION", "READABLE_VERSIONS", "RunRecord", "SuiteInfo", "LimitInfo", "Selection",
    "Counts", "Aggregate", "GateEntry", "Baseline", "VerdictEntry", "RescoreOf", "MergedShard",
    "Decision", "new_run_id", "item_counts", "RecordModel", "ItemEntry", "OtherTest", "Crash", "OutcomeCounts",
    "outcome_counts", "Comparison", "SpeedStats", "SpeedChange", "RunOrder", "GateSequence",
    "RecordError", "parse_record", "load_record", "dump_record", "record_schema",
    "NotEvaluated",
]  # fmt: skip
