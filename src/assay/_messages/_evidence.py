"""Messages about run directories, the baseline gate and verification findings."""

from __future__ import annotations

MESSAGES: dict[str, tuple[str, str, str, str]] = {
    # --- evidence ---------------------------------------------------------------------
    "event.reserved": (
        "record_event({kind!r}, ...): {kind!r} is an event type assay writes itself",
        "name your event something else, e.g. 'extra' or 'my_{kind}' (see docs/evidence.md)",
        "record_event({kind!r}, ...)：{kind!r} 是 assay 自己写入的事件类型",
        "请换一个事件名，例如 'extra' 或 'my_{kind}'（见 docs/evidence.md）",
    ),
    "run.not_a_run": (
        "{path} is not an assay run directory ({reason})",
        "pass the folder that 'assay run --output' wrote",
        "{path} 不是 assay 运行目录（{reason}）",
        "请传入 'assay run --output' 写出的目录",
    ),
    "run.not_started": (
        "{path} holds a run stopped before it started (spec.json but no manifest.json)",
        "nothing ran: start it again with 'assay run SPEC --output {path}'",
        "{path} 中的运行在开始前就被中止（有 spec.json，没有 manifest.json）",
        "尚未运行任何试验：请用 'assay run SPEC --output {path}' 重新开始",
    ),
    "run.exists": (
        "output folder {path} already holds a run",
        "choose another --output folder, or remove the old run first",
        "输出目录 {path} 中已经有一次运行",
        "请换一个 --output 目录，或先删除旧的运行",
    ),
    "run.locked": (
        "{path} is in use by another assay process",
        "wait for it to finish, or stop it, then try again",
        "{path} 正被另一个 assay 进程使用",
        "请等待其结束或将其停止后再试",
    ),
    "run.complete": (
        "{path} is already complete; nothing to resume",
        "use 'assay gate {path}' to see its decision",
        "{path} 已经完成，无需恢复",
        "可用 'assay gate {path}' 查看其门禁结论",
    ),
    "run.spec_changed": (
        "the spec no longer matches the run in {path}: {reason}",
        "restore the spec and dataset the run was started with, or start a new run",
        "规范已与 {path} 中的运行不一致：{reason}",
        "请恢复该运行开始时的规范与数据集，或者开始一次新的运行",
    ),
    "run.interrupted": (
        "interrupted; finished trials are kept in {path}",
        "resume with: assay resume {path}",
        "运行被中断；已完成的试验保存在 {path}",
        "可用以下命令继续：assay resume {path}",
    ),
    "run.errors": (
        "{count} trial(s) errored, over fail_on_error={limit}; the run stopped. The first: {first}",
        "fix the error (see the trials' error events), raise fail_on_error, or use "
        "retry_on_error / continue_on_fail",
        "{count} 个试验出错，超过 fail_on_error={limit}；运行已停止。第一个错误：{first}",
        "请修复错误（见各试验的 error 事件），或调高 fail_on_error，"
        "或使用 retry_on_error / continue_on_fail",
    ),
    "run.storage": (
        "cannot write the run to {path}: {reason}",
        "check that the folder is writable and the disk has space",
        "无法把运行写入 {path}：{reason}",
        "请检查目录可写且磁盘有剩余空间",
    ),
    "show.unknown_id": (
        "{path} has no trial or sample {ident!r}",
        "give a trial id (t- and 24 hex digits, as report.html lists them) or a sample id",
        "{path} 中没有试验或样本 {ident!r}",
        "请给出试验编号（t- 加 24 位十六进制，见 report.html）或样本编号",
    ),
    "show.one_id": (
        "assay show needs one trial or sample id: as ID, or as --trial ID (not both)",
        "assay show RUN ID prints the trial; assay show RUN --trial ID adds its transcript "
        "turn by turn",
        "assay show 需要一个试验或样本编号：作为 ID 或 --trial ID（不能同时给出）",
        "assay show RUN ID 显示该试验；assay show RUN --trial ID 另外逐轮显示其对话记录",
    ),
    "evidence.frame": (
        "a compacted evidence file does not read back: {what}",
        "it was changed or cut; run 'assay verify' on the run for every problem, and do "
        "not trust scores from it",
        "压缩的证据文件无法读回：{what}",
        "它已被修改或截断；对该运行执行 'assay verify' 查看所有问题，不要信任其中的分数",
    ),
    "evidence.tampered": (
        "evidence in {path} does not verify: {count} problem(s); first: {first}",
        "run 'assay verify {path}' for the full list; do not trust scores from it",
        "{path} 中的证据校验失败：共 {count} 处问题；第一处：{first}",
        "运行 'assay verify {path}' 查看完整列表；不要信任其中的分数",
    ),
    "compare.no_match": (
        "cannot tell which targets of {a} to compare with which of {b} "
        "(targets {targets_a} and {targets_b})",
        "compare runs that share target ids, or runs of one target each",
        "无法确定 {a} 与 {b} 中哪些目标应相互比较（目标分别为 {targets_a} 和 {targets_b}）",
        "请比较目标 id 相同的运行，或各只有一个目标的运行",
    ),
    "compare.no_pairs": (
        "{a} and {b} share no scored sample for {target} ({scorer})",
        "compare two runs over the same dataset",
        "{a} 与 {b} 在 {target}（{scorer}）上没有共同的已评分样本",
        "请比较基于同一数据集的两次运行",
    ),
    "compare.sample_changed": (
        "{a} and {b} ran different samples under the same id ({samples}: their sample "
        "digests differ)",
        "compare two runs over the same dataset; a changed sample needs a new id or a new "
        "baseline run",
        "{a} 与 {b} 在相同的 id 下运行了不同的样本（{samples}：样本摘要不同）",
        "请比较基于同一数据集的两次运行；修改过的样本需要新的 id 或重新运行基线",
    ),
    # --- gate: no_regression baseline (stats) ------------------------------------------
    "gate.baseline_unused": (
        "--baseline {path} was given, but the spec declares no gate.no_regression policy",
        "declare 'no_regression:' with its 'margin' under 'gate:' in the spec (docs/spec.md)",
        "指定了 --baseline {path}，但规范中没有声明 gate.no_regression 策略",
        "请在规范的 'gate:' 下声明 'no_regression:' 及其 'margin'（见 docs/spec.md）",
    ),
    "sink.failed": (
        "event sink {url} failed for {failed} of {total} batches, over the limit of {limit}",
        "check the collector at {url}; failed batches were kept in {fallback}",
        "事件接收端 {url} 有 {failed}/{total} 批发送失败，超过上限 {limit}",
        "请检查 {url} 上的接收服务；失败的批次已保存在 {fallback}",
    ),
    "usage.lang": (
        "unknown language {lang!r}",
        "use --lang en or --lang zh",
        "未知的语言 {lang!r}",
        "请使用 --lang en 或 --lang zh",
    ),
    "internal": (
        "internal error: {reason}",
        "rerun with --debug for the traceback and report it",
        "内部错误：{reason}",
        "请加上 --debug 重新运行以查看调用栈，并报告此问题",
    ),
    # --- verification findings ----------------------------------------------------------
    "verify.missing": ("missing", "", "缺失", ""),
    "verify.spec_digest": (
        "digest {digest} does not match the manifest",
        "",
        "摘要 {digest} 与清单不一致",
        "",
    ),
    "verify.spec_invalid": ("not a valid spec ({reason})", "", "不是合法的规范（{reason}）", ""),
    "verify.file_digest": (
        "digest {digest} does not match the manifest ({expected})",
        "",
        "摘要 {digest} 与清单记录（{expected}）不一致",
        "",
    ),
    "verify.not_record": (
        "not a {kind} record (torn or edited)",
        "",
        "不是有效的{kind}记录（写入不完整或被修改）",
        "",
    ),
    "verify.plan_id": (
        "trial id {found} should be {expected}",
        "",
        "试验 id {found} 应为 {expected}",
        "",
    ),
    "verify.plan_count": (
        "{found} trials, the spec plans {expected}",
        "",
        "共 {found} 个试验，而规范计划了 {expected} 个",
        "",
    ),
    "verify.chain": (
        "chain broken (prev does not match line {previous})",
        "",
        "哈希链断裂（prev 与第 {previous} 行不符）",
        "",
    ),
    "verify.event_order": (
        "event {n} of trial {trial} out of order",
        "",
        "试验 {trial} 的事件 {n} 顺序错误",
        "",
    ),
    "verify.event_parent": (
        "parent {parent} of event {n} does not exist",
        "",
        "事件 {n} 的父事件 {parent} 不存在",
        "",
    ),
    "verify.event_batch": (
        "batch {n} is not a trial's parentless, non-empty batch numbered as its last event",
        "",
        "批次 {n} 不是属于某个试验、无父事件、非空且编号等于其最后一个事件的事件批次",
        "",
    ),
    "verify.batch_kind": (
        "a {kind} event is logged on its own line after the bundle, not in a batch",
        "",
        "{kind} 事件应在封存证据包之后单独成行记录，而不在批次中",
        "",
    ),
    "verify.event_tail": (
        "{count} records ending in {head}…, "
        "the manifest says {expected_count} ending in {expected_head}…",
        "",
        "共 {count} 条记录，末尾哈希 {head}…；"
        "清单记录为 {expected_count} 条，末尾哈希 {expected_head}…",
        "",
    ),
    "verify.artifact": (
        "content hashes to {actual}, not to its name",
        "",
        "内容的哈希为 {actual}，与文件名不符",
        "",
    ),
    "verify.bundle_digest": ("digest does not match its content", "", "摘要与内容不符", ""),
    "verify.bundle_unplanned": ("trial is not in the plan", "", "该试验不在计划中", ""),
    "verify.bundle_twice": ("second bundle for the trial", "", "该试验有重复的证据包", ""),
    # --- merging shards ---------------------------------------------------------------
    "merge.refused": (
        "cannot merge: {reason}",
        "pass every shard K/N of one spec, each sealed complete and verified",
        "无法合并：{reason}",
        "请传入同一规范的每个分片 K/N，且每个都已完成并通过验证",
    ),
    "merge.not_shard": (
        "{path} is not a shard run (it was not run with --shard K/N)",
        "",
        "{path} 不是分片运行（未使用 --shard K/N 运行）",
        "",
    ),
    "merge.unfinished": (
        "{path} is {status}, not complete (finish it with 'assay resume {path}')",
        "",
        "{path} 的状态为 {status}，尚未完成（请用 'assay resume {path}' 完成它）",
        "",
    ),
    "merge.spec_differs": (
        "{path} ran another spec than {first} (their spec digests differ)",
        "",
        "{path} 运行的规范与 {first} 不同（规范摘要不一致）",
        "",
    ),
    "merge.count_differs": (
        "{path} is shard {shard}, which splits the plan otherwise than {first}",
        "",
        "{path} 是分片 {shard}，其计划划分与 {first} 不同",
        "",
    ),
    "merge.twice": (
        "shard {shard} is given twice ({paths}): the shards overlap",
        "",
        "分片 {shard} 被重复给出（{paths}）：分片有重叠",
        "",
    ),
    "merge.missing": (
        "shard {shards} missing: the shards do not cover the plan",
        "",
        "缺少分片 {shards}：这些分片未覆盖整个计划",
        "",
    ),
    "merge.output_in_shard": (
        "--output {path} is inside the shard {shard}: the merge would copy it into itself",
        "pass an --output folder outside every shard",
        "--output {path} 位于分片 {shard} 之内：合并会把它复制进它自身",
        "请传入位于所有分片之外的 --output 文件夹",
    ),
    "merge.bad_shard": (
        "{path} does not verify: {first} ({count} problem(s); see 'assay verify {path}')",
        "",
        "{path} 未通过验证：{first}（共 {count} 个问题；见 'assay verify {path}'）",
        "",
    ),
    "verify.shard_pin": (
        "the shard's {what} is not the one the merged run pinned",
        "",
        "该分片的 {what} 与合并运行所固定的不一致",
        "",
    ),
    "verify.shard_path": (
        "the merged run names a shard outside its {folder}/ folder",
        "",
        "合并运行引用了其 {folder}/ 目录之外的分片",
        "",
    ),
    "verify.shard_problem": ("{problem}", "", "{problem}", ""),
    "verify.bundle_other_shard": (
        "the trial is not in shard {shard}'s part of the plan",
        "",
        "该试验不属于分片 {shard} 的计划部分",
        "",
    ),
    "verify.bundle_count": (
        "{found} bundles for {planned} planned trials",
        "",
        "计划 {planned} 个试验，却有 {found} 个证据包",
        "",
    ),
    "verify.sequential": (
        "{kind} event does not follow from the scores: {reason}",
        "",
        "{kind} 事件与评分不符：{reason}",
        "",
    ),
    "verify.bundle_events": (
        "its events differ from those in {events}",
        "",
        "其事件与 {events} 中的记录不一致",
        "",
    ),
    "verify.event_artifact": (
        "the artifact its {field} names (sha256 {sha}…) is not in the store",
        "",
        "其 {field} 所指的工件（sha256 {sha}…）不在存储中",
        "",
    ),
    "verify.bundle_artifact": (
        "artifact {name} ({path}) is missing or altered",
        "",
        "工件 {name}（{path}）缺失或已被修改",
        "",
    ),
    "verify.score_bundle": (
        "bundle digest does not match trial {trial}'s bundle",
        "",
        "证据包摘要与试验 {trial} 的证据包不一致",
        "",
    ),
    "verify.torn": (
        "the record has no line end (torn write or edit)",
        "",
        "该记录缺少换行符（写入不完整或被修改）",
        "",
    ),
    "verify.plan_line": (
        "not the trial the spec plans here ({trial})",
        "",
        "与规范在此位置计划的试验（{trial}）不一致",
        "",
    ),
    "verify.manifest_field": (
        "field {field!r} does not match the sealed event log",
        "",
        "字段 {field!r} 与封存的事件日志不一致",
        "",
    ),
    "verify.score_unbound": (
        "this score record is not the one its match event recorded",
        "",
        "该评分记录与其 match 事件所记录的不一致",
        "",
    ),
    "verify.not_canonical": (
        "not canonical JSON (sorted keys, no spaces): its bytes were edited",
        "",
        "不是规范 JSON（键有序、无空白）：其字节被改动过",
        "",
    ),
    "verify.unknown_file": (
        "not a file assay writes: move it out of the run folder",
        "",
        "不是 assay 写入的文件：请将其移出运行目录",
        "",
    ),
    "verify.unreadable": ("cannot be checked ({reason})", "", "无法校验（{reason}）", ""),
    # --- verify's notes (not findings: the evidence is not in question) ------------------
    "verify.redone": (
        "note: the event pass was redone in this process: {reason}",
        "",
        "注意：事件链校验已在本进程中重做：{reason}",
        "",
    ),
    "verify.packs_redone": (
        "note: the artifact pass was redone in this process: {reason}",
        "",
        "注意：制品校验已在本进程中重做：{reason}",
        "",
    ),
    "verify.worker_exit": (
        "the worker exited with code {code}",
        "",
        "工作进程以退出码 {code} 结束",
        "",
    ),
    "verify.worker_answer": (
        "the worker's answer could not be read ({reason})",
        "",
        "无法读取工作进程的结果（{reason}）",
        "",
    ),
    "verify.worker_start": (
        "the worker could not start ({reason})",
        "",
        "工作进程无法启动（{reason}）",
        "",
    ),
}
