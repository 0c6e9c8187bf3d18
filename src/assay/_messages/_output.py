"""Lines the commands print (no hint)."""

from __future__ import annotations

MESSAGES: dict[str, tuple[str, str, str, str]] = {
    # --- command output -----------------------------------------------------------------
    "out.target": (
        "{target:<20} {status:<13} {scorer}: {passed}/{denominator} = {rate:.4f} "
        "[{level:.0%} CI {low:.3f}–{high:.3f}]{minimum}",
        "",
        "{target:<20} {status:<13} {scorer}：{passed}/{denominator} = {rate:.4f} "
        "[{level:.0%} 置信区间 {low:.3f}–{high:.3f}]{minimum}",
        "",
    ),
    "out.minimum": (" (minimum {minimum:g})", "", "（最低要求 {minimum:g}）", ""),
    "out.gate": ("gate: {status}", "", "门禁结论：{status}", ""),
    "out.gate_ungated": (
        "gate: not gated: no minimum, min_effect or no_regression declared",
        "",
        "门禁结论：未设门禁：未声明 minimum、min_effect 或 no_regression",
        "",
    ),
    "out.gate_shard": ("gate: inconclusive: {reason}", "", "门禁结论：不确定：{reason}", ""),
    "out.gate_stopped": ("gate: stopped: {cause}", "", "门禁结论：运行已中止：{cause}", ""),
    "out.sandbox_kept": (
        "sandbox {name!r} of trial {trial} kept at {path}",
        "",
        "试验 {trial} 的沙箱 {name!r} 已保留在 {path}",
        "",
    ),
    "out.run_dir": ("evidence and reports: {path}", "", "证据与报告：{path}", ""),
    "out.progress": (
        "{evaluation}: {done}/{planned} trials ({percent}%){more}",
        "",
        "{evaluation}：{done}/{planned} 个试验（{percent}%）{more}",
        "",
    ),
    "out.progress_rate": (", {rate}/s", "", "，每秒 {rate} 个", ""),
    "out.progress_slow": (", {seconds} s/trial", "", "，每个试验 {seconds} 秒", ""),
    "out.progress_pass": (", pass {rates}", "", "，通过率 {rates}", ""),
    "out.progress_errors": (
        ", {errors} error(s), {retries} retry(ies)",
        "",
        "，{errors} 个错误，{retries} 次重试",
        "",
    ),
    "out.progress_usage": (", {tokens} tokens, {cost}", "", "，{tokens} 个词元，{cost}", ""),
    "out.progress_workers": (", {workers} worker(s)", "", "，{workers} 个工作节点", ""),
    "out.progress_left": (", about {time} left", "", "，约剩 {time}", ""),
    "out.dry_run": ("dry run: nothing was written", "", "演练模式：未写入任何文件", ""),
    "out.verify_ok": (
        "verified {path}: {trials} trials, {events} events, {artifacts} artifacts, "
        "{bundles} bundles, {scores} scores; every digest matches",
        "",
        "已校验 {path}：{trials} 个试验、{events} 条事件、{artifacts} 个工件、"
        "{bundles} 个证据包、{scores} 条评分；所有摘要一致",
        "",
    ),
    "out.verify_unfinished": (
        "{path} is UNFINISHED ({status}): {finished} of {planned} trials finished; every "
        "digest of what it holds matches — finish it with `assay resume {path}`",
        "",
        "{path} 尚未完成（{status}）：{planned} 个试验中已完成 {finished} 个；"
        "已有内容的所有摘要一致——用 `assay resume {path}` 完成它",
        "",
    ),
    "out.verify_bad": (
        "{path} does NOT verify: {count} problem(s)",
        "",
        "{path} 校验失败：共 {count} 处问题",
        "",
    ),
    "out.scores_same": (
        "re-scored {scores} scores from evidence: all equal the recorded ones",
        "",
        "已根据证据重新评分 {scores} 条：全部与记录一致",
        "",
    ),
    "out.scores_differ": (
        "re-scored {scores} scores from evidence: {count} differ from the recorded ones "
        "(first: {first})",
        "",
        "已根据证据重新评分 {scores} 条：其中 {count} 条与记录不一致（第一条：{first}）",
        "",
    ),
    "out.compare": (
        "{a} vs {b} [{scorer}]: {pairs} pairs, {rate_a:.4f} -> {rate_b:.4f}, "
        "difference {difference:+.4f} ({level:.0%} interval [{low:+.4f}, {high:+.4f}]); "
        "A only {a_only}, B only {b_only}; {test} p = {p:.4g} (Holm-adjusted {p_adjusted:.4g})",
        "",
        "{a} 对比 {b} [{scorer}]：{pairs} 对，{rate_a:.4f} -> {rate_b:.4f}，"
        "差值 {difference:+.4f}（{level:.0%} 区间 [{low:+.4f}, {high:+.4f}]）；"
        "仅 A 通过 {a_only}，仅 B 通过 {b_only}；{test} p = {p:.4g}（Holm 校正 {p_adjusted:.4g}）",
        "",
    ),
    "out.compare_mean": (
        "{a} vs {b} [{scorer}]: {pairs} samples, mean {rate_a:.4f} -> {rate_b:.4f}, "
        "difference {difference:+.4f} ({level:.0%} score interval [{low:+.4f}, {high:+.4f}]); "
        "A higher {a_only}, B higher {b_only}; sign test p = {p:.4g} "
        "(Holm-adjusted {p_adjusted:.4g})",
        "",
        "{a} 对比 {b} [{scorer}]：{pairs} 个样本，均值 {rate_a:.4f} -> {rate_b:.4f}，"
        "差值 {difference:+.4f}（{level:.0%} 得分区间 [{low:+.4f}, {high:+.4f}]）；"
        "A 更高 {a_only}，B 更高 {b_only}；符号检验 p = {p:.4g}（Holm 校正 {p_adjusted:.4g}）",
        "",
    ),
    "out.unpaired": (
        "  not paired: {a} of A, {b} of B (absent from the other run, or not measured)",
        "",
        "  未配对：A 的 {a}，B 的 {b}（另一运行中没有，或未能测量）",
        "",
    ),
    "out.flipped": (
        "  flipped: {sample} #{repetition}: A {a}, B {b}",
        "",
        "  翻转：{sample} #{repetition}：A {a}，B {b}",
        "",
    ),
    "out.reason": ("  - {target}: {reason}", "", "  - {target}：{reason}", ""),
    "out.interrupted": (
        "interrupted; finished trials are kept in {path}; resume with: assay resume {path}",
        "",
        "运行被中断；已完成的试验保存在 {path}；可用以下命令继续：assay resume {path}",
        "",
    ),
    "out.resumed": (
        "resumed {path}: {finished} trials were already finished{repaired}",
        "",
        "已恢复 {path}：其中 {finished} 个试验此前已完成{repaired}",
        "",
    ),
    # --- assay show -------------------------------------------------------------------
    "out.show_trial": (
        "{trial}  target {target} · sample {sample} · repetition {repetition}",
        "",
        "{trial}  目标 {target} · 样本 {sample} · 第 {repetition} 次",
        "",
    ),
    "out.show_state": (
        "  state: {state} ({outcome}); attempts: {attempts}",
        "",
        "  状态：{state}（{outcome}）；尝试：{attempts}",
        "",
    ),
    "out.show_input": ("  input: {value}", "", "  输入：{value}", ""),
    "out.show_messages": ("  messages:", "", "  消息：", ""),
    "out.show_transcript": ("  transcript:", "", "  对话记录：", ""),
    "out.show_spans": ("  spans:", "", "  跨度：", ""),
    "out.show_expected": ("  expected: {value}", "", "  期望：{value}", ""),
    "out.show_output": ("  output: {value}", "", "  输出：{value}", ""),
    "out.show_failure": ("  failure: {value}", "", "  失败原因：{value}", ""),
    "out.show_stderr": ("  stderr: {value}", "", "  标准错误输出：{value}", ""),
    "out.show_score": (
        "  score {scorer}: {status} ({value}){reason}",
        "",
        "  评分 {scorer}：{status}（{value}）{reason}",
        "",
    ),
    "out.show_cut": (
        "… {more} more characters (--full shows all)",
        "",
        "……另有 {more} 个字符（--full 显示全部）",
        "",
    ),
    "out.show_digest": (
        "  bundle {digest}: matches its digest, and so do its output and scores",
        "",
        "  证据包 {digest}：与其摘要一致，输出与评分亦然",
        "",
    ),
}
