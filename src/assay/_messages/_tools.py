"""Messages about tools a solver gives a model (``@tool``, ``use_tools``, exit 2).

What a tool call tells the *model* (bad arguments, a ``ToolError``) is not here: that is
part of the trial's evidence and stays the same in every language.
"""

from __future__ import annotations

MESSAGES: dict[str, tuple[str, str, str, str]] = {
    # --- tools: definitions and use_tools --------------------------------------------
    "tool.not_function": (
        "@tool needs a function, got {value} ({where})",
        "put @tool on a def or async def whose parameters have type hints",
        "@tool 需要一个函数，得到的是 {value}（{where}）",
        "请把 @tool 放在参数带类型注解的 def 或 async def 上",
    ),
    "tool.with_unknown_parameter": (
        "tool_with({tool!r}): {parameter!r} is not one of its parameters (it has: {known})",
        "name only the tool's own parameters in tool_with(parameters=...)",
        "tool_with({tool!r})：{parameter!r} 不是它的参数（它有：{known}）",
        "tool_with(parameters=...) 中只写该工具自己的参数",
    ),
    "tool.bad_name": (
        "tool name {name!r} is not allowed ({where})",
        "use 1 to 64 letters, digits, '_' or '-', e.g. @tool(name=\"add_numbers\")",
        "工具名 {name!r} 不合法（{where}）",
        "请使用 1 到 64 个字母、数字、'_' 或 '-'，例如 @tool(name=\"add_numbers\")",
    ),
    "tool.parameter_kind": (
        "tool {name!r} has parameter {parameter!r} of a kind a model cannot pass ({where})",
        "a model passes arguments by name: replace *args, **kwargs and positional-only "
        "parameters with named ones",
        "工具 {name!r} 的参数 {parameter!r} 的形式模型无法传入（{where}）",
        "模型按名称传参：请把 *args、**kwargs 和仅限位置的参数改为具名参数",
    ),
    "tool.no_type_hint": (
        "tool {name!r}: parameter {parameter!r} has no type hint ({where})",
        "annotate it, e.g. '{parameter}: str': the hint is what the model is told to pass",
        "工具 {name!r}：参数 {parameter!r} 没有类型注解（{where}）",
        "请为其添加注解，例如 '{parameter}: str'：注解就是告诉模型应传入的类型",
    ),
    "tool.unsupported_type": (
        "tool {name!r}: the type of parameter {parameter!r} has no JSON Schema ({reason}) "
        "({where})",
        "use JSON types (str, int, float, bool, list, dict, Literal, None), dataclasses, "
        "TypedDicts or msgspec Structs",
        "工具 {name!r}：参数 {parameter!r} 的类型无法生成 JSON Schema（{reason}）（{where}）",
        "请使用 JSON 类型（str、int、float、bool、list、dict、Literal、None）、dataclass、"
        "TypedDict 或 msgspec Struct",
    ),
    "tool.not_a_tool": (
        "use_tools was given {value}, which is not a tool",
        "decorate the function with @tool (from assay import tool) and pass that",
        "use_tools 收到的 {value} 不是工具",
        "请用 @tool（from assay import tool）装饰该函数后再传入",
    ),
    "tool.factory_not_called": (
        "use_tools was given the tool factory {name!r}, not a tool",
        "call it to make the tool: use_tools({name}())",
        "use_tools 收到的是工具工厂 {name!r}，而不是工具",
        "请调用它来生成工具：use_tools({name}())",
    ),
    "tool.factory_result": (
        "tool factory {name!r} returned {value}, not a function ({where})",
        "an Inspect-style @tool factory returns the async function the model calls "
        "(async def execute(...))",
        "工具工厂 {name!r} 返回了 {value}，而不是函数（{where}）",
        "Inspect 风格的 @tool 工厂应返回模型调用的异步函数（async def execute(...)）",
    ),
    "tool.duplicate": (
        "use_tools was given two tools named {name!r}",
        'give one of them another name: @tool(name="...")',
        "use_tools 收到了两个名为 {name!r} 的工具",
        '请为其中一个另起名字：@tool(name="...")',
    ),
    "tool.unknown_choice": (
        "tool_choice {choice!r} names no tool given ({tools})",
        'use "auto", "none", "any" or the name of one of the tools',
        "tool_choice {choice!r} 不是所给工具之一（{tools}）",
        '请使用 "auto"、"none"、"any" 或其中一个工具的名字',
    ),
    # --- approval: Task(approval=...), eval(approval=...) -----------------------------
    "approval.human": (
        "human_approver() cannot be used: assay runs trials unattended, with no one to ask",
        'decide in code instead: auto_approver("reject"), or an @approver of your own',
        "无法使用 human_approver()：assay 无人值守地运行试验，没有人可以询问",
        '请改为在代码中决定：auto_approver("reject")，或自己编写的 @approver',
    ),
    "approval.not_rebuilt": (
        "approver {name!r} of eval(approval=...) cannot be made again to resume this run",
        "register it with @approver and give it JSON arguments, or put the policies on the Task",
        "无法重新创建 eval(approval=...) 的审批器 {name!r}，因此不能恢复此运行",
        "请用 @approver 注册它并只传 JSON 参数，或把策略写在 Task 上",
    ),
    "approval.file": (
        "approval file {path}: {reason}",
        "list them under 'approvers:', each with 'name:' (a registered approver, e.g. auto), "
        "'tools:' globs (e.g. \"*\") and its arguments (docs/tools.md)",
        "审批文件 {path}：{reason}",
        "请在 'approvers:' 下逐项写出 'name:'（已注册的审批器，如 auto）、'tools:' 通配符"
        '（如 "*"）和参数（见 docs/tools.md）',
    ),
    "approval.bad_policy": (
        "approval= takes ApprovalPolicy objects or an approval file's path, got {value}",
        'write approval=[ApprovalPolicy(auto_approver(), "*")]',
        "approval= 需要 ApprovalPolicy 对象，得到的是 {value}",
        '请写 approval=[ApprovalPolicy(auto_approver(), "*")]',
    ),
    "tool.bad_tool_calls": (
        'generate(tool_calls={value!r}) is not one of "loop", "single", "none"',
        '"loop" runs tools until the model answers without calling one, "single" runs '
        'one round, "none" runs none',
        'generate(tool_calls={value!r}) 不是 "loop"、"single"、"none" 之一',
        '"loop" 会一直调用工具直到模型不再调用，"single" 只执行一轮，"none" 不执行',
    ),
}
