"""Messages about sandboxes (providers, the programs they need; exit 2)."""

from __future__ import annotations

MESSAGES: dict[str, tuple[str, str, str, str]] = {
    "sandbox.program_missing": (
        "the sandbox needs {path}, which is missing or not executable",
        "install it: apt-get install {package} (or choose sandbox 'local', which isolates nothing)",
        "沙箱需要 {path}，但它不存在或不可执行",
        "请安装：apt-get install {package}（或选择不做任何隔离的 'local' 沙箱）",
    ),
    "sandbox.unknown": (
        "no sandbox provider is called {name!r}",
        "use one of: {known} (a plugin registers more in the 'assay.sandboxes' entry point group)",
        "没有名为 {name!r} 的沙箱提供者",
        "请使用其中之一：{known}（插件可在 'assay.sandboxes' 入口点组中注册更多）",
    ),
    "sandbox.none": (
        "sandbox() was called, but this sample has no sandbox",
        "declare one: Task(..., sandbox='bwrap') or Sample(..., sandbox='bwrap')"
        " ('local' isolates nothing)",
        "调用了 sandbox()，但这个样本没有沙箱",
        "请声明沙箱：Task(..., sandbox='bwrap') 或 Sample(..., sandbox='bwrap')"
        "（'local' 不做任何隔离）",
    ),
    "sandbox.no_such_name": (
        "this sample has no sandbox called {name!r}",
        "use one of: {known}, or declare it in the task's sandbox list",
        "这个样本没有名为 {name!r} 的沙箱",
        "请使用其中之一：{known}，或在任务的 sandbox 列表中声明它",
    ),
}
