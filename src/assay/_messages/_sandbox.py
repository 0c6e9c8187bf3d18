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
    "sandbox.spec": (
        "{where}: {got} is not a sandbox",
        "write a provider name ('bwrap'), a (provider, options) pair, or a mapping of"
        " names to either",
        "{where}：{got} 不是沙箱声明",
        "请写提供者名称（'bwrap'）、(提供者, 选项) 二元组，或名称到二者之一的映射",
    ),
    "sandbox.options": (
        "sandbox provider {provider!r} refused its options: {reason}",
        "give only the options the provider takes (see docs/sandbox.md)",
        "沙箱提供者 {provider!r} 不接受这些选项：{reason}",
        "只提供该提供者支持的选项（见 docs/sandbox.md）",
    ),
    "sandbox.setup_failed": (
        "the sample's setup script exited {code} in sandbox {name!r}: {stderr}",
        "fix the setup script (its output is in the trial's sandbox_setup event)",
        "样本的 setup 脚本在沙箱 {name!r} 中以 {code} 退出：{stderr}",
        "请修正 setup 脚本（其输出见该试验的 sandbox_setup 事件）",
    ),
    "sandbox.file_missing": (
        "sample file {path!r} names {source}, which cannot be read: {reason}",
        "give the file's contents inline, or a path relative to the dataset's folder",
        "样本文件 {path!r} 指向 {source}，但无法读取：{reason}",
        "请直接给出文件内容，或给出相对于数据集目录的路径",
    ),
    "sandbox.temp_unreachable": (
        "sandbox work folders are made in {folder}, but the sandbox user (uid 65534) cannot"
        " enter {path}",
        "set TMPDIR to a folder every user can enter (e.g. /tmp), or run assay as a user"
        " other than root",
        "沙箱工作目录建在 {folder} 中，但沙箱用户（uid 65534）无法进入 {path}",
        "请将 TMPDIR 设为所有用户都能进入的目录（如 /tmp），或不以 root 身份运行 assay",
    ),
}
