"""Messages about what is written beside a run: JUnit XML, CI summaries, exports."""

from __future__ import annotations

MESSAGES: dict[str, tuple[str, str, str, str]] = {
    "export.no_pandas": (
        "assay.read_run needs the 'pandas' package, which is not installed",
        "install it: pip install pandas (or use 'assay export RUN --format csv')",
        "assay.read_run 需要 'pandas' 包，但它没有安装",
        "请安装：pip install pandas（或改用 'assay export RUN --format csv'）",
    ),
    "export.one_target": (
        "{path} has {count} targets ({targets}); an Inspect log is of one model",
        "pick one with --target ID",
        "{path} 有 {count} 个目标（{targets}）；一个 Inspect 日志只对应一个模型",
        "请用 --target ID 选择其一",
    ),
    "export.log_format": (
        "write_eval_log({path!r}): assay writes Inspect's .eval log only, not {format}",
        'give a path ending in .eval, or format="eval"',
        "write_eval_log({path!r})：assay 只写 Inspect 的 .eval 日志，不写 {format}",
        '请给出以 .eval 结尾的路径，或 format="eval"',
    ),
    "export.no_target": (
        "{path} has no target {target!r} (its targets: {targets})",
        "use one of its targets' ids with --target",
        "{path} 没有目标 {target!r}（其目标：{targets}）",
        "请用 --target 指定其中一个目标的 id",
    ),
    "ci.unwritable": (
        "cannot write {what} {path}: {reason}",
        "choose a file in a folder you can write to",
        "无法写入{what} {path}：{reason}",
        "请选择可写目录中的文件",
    ),
    "out.exported": (
        "exported {count} trial(s) to {path}",
        "",
        "已导出 {count} 个试验到 {path}",
        "",
    ),
}
