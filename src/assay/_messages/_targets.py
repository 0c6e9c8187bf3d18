"""Messages about targets that fail while a run goes on (a program that never answers)."""

from __future__ import annotations

MESSAGES: dict[str, tuple[str, str, str, str]] = {
    "run.program_crash_loop": (
        "target {target}: the program's last {count} starts in a row each ended before it "
        "answered a single call, so the run stopped; the last: {last}",
        "fix the program (run it by hand and give it one request line on stdin: it must "
        "print nothing to stdout but answer lines), then finish the run with: assay resume "
        "{path} (a changed script needs a new run)",
        "目标 {target}：程序连续 {count} 次启动，每次都在回答任何调用之前就结束了，"
        "因此运行已停止；最后一次：{last}",
        "请修复该程序（手动运行它，并在标准输入中给它一行请求：它在标准输出上只能打印回答行），"
        "然后用以下命令完成运行：assay resume {path}（修改过脚本则需重新运行）",
    ),
}
