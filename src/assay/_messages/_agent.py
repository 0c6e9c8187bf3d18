"""Messages about agents (``react``, ``basic_agent``, ``handoff``): configuration, exit 2.

What an agent tells the *model* (keep going, that answer was wrong) is part of the
trial's evidence and is configured per agent, not translated here.
"""

from __future__ import annotations

MESSAGES: dict[str, tuple[str, str, str, str]] = {
    "agent.bad_attempts": (
        "{agent}: attempts must be a whole number of at least 1, not {value}",
        "e.g. attempts=3 (or AgentAttempts(3, incorrect_message=...))",
        "{agent}：attempts 必须是至少为 1 的整数，而不是 {value}",
        "例如 attempts=3（或 AgentAttempts(3, incorrect_message=...)）",
    ),
    "agent.bad_limit": (
        "{agent}: {name} must be a whole number of at least 1, not {value}",
        "e.g. {name}=30, or leave it out",
        "{agent}：{name} 必须是至少为 1 的整数，而不是 {value}",
        "例如 {name}=30，或不设置",
    ),
    "agent.not_a_tool": (
        "{agent} was given {value}, which is not a tool",
        "decorate the function with @tool (from assay import tool), or wrap an agent "
        "with handoff(agent)",
        "{agent} 收到的 {value} 不是工具",
        "请用 @tool（from assay import tool）装饰该函数，或用 handoff(agent) 包装智能体",
    ),
    "agent.duplicate_tool": (
        "{agent} was given two tools named {name!r} (the submit tool counts)",
        'give one of them another name: @tool(name="...") or submit=AgentSubmit(name="...")',
        "{agent} 收到了两个名为 {name!r} 的工具（提交工具也算在内）",
        '请为其中一个另起名字：@tool(name="...") 或 submit=AgentSubmit(name="...")',
    ),
    "agent.no_judge": (
        "{agent} allows {attempts} attempts, but the task has no scorer to judge an answer",
        "give the Task a scorer (e.g. scorer=includes()), or use attempts=1",
        "{agent} 允许 {attempts} 次尝试，但任务没有可评判答案的评分器",
        "请为 Task 提供评分器（例如 scorer=includes()），或使用 attempts=1",
    ),
    "agent.as_tool_not_agent": (
        "as_tool() needs an agent, got {value}",
        "give it a react() or basic_agent() agent, or one made by an @agent function",
        "as_tool() 需要一个智能体，得到的是 {value}",
        "请传入 react() 或 basic_agent() 智能体，或由 @agent 函数创建的智能体",
    ),
    "agent.as_tool_args": (
        "as_tool({agent}) was given {names}, which the agent does not take",
        "give only parameters of an @agent agent's execute after its state (a react() "
        "agent takes none: set its options when making it)",
        "as_tool({agent}) 收到了 {names}，但该智能体不接受这些参数",
        "只能给出 @agent 智能体 execute 中状态之后的参数（react() 智能体不接受任何参数："
        "请在创建时设置其选项）",
    ),
    "agent.handoff_no_name": (
        "handoff() needs an agent with a name, got {value}",
        'name it: react(name="researcher", description="...", ...)',
        "handoff() 需要一个有名字的智能体，得到的是 {value}",
        '请为其命名：react(name="researcher", description="...", ...)',
    ),
}
