"""Messages about specs, datasets, options and YAML values (exit 2)."""

from __future__ import annotations

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
    "spec.script_changed": (
        "{field} ({value}) changed after the spec was frozen",
        "leave the script alone while a run starts, then run again",
        "{field}（{value}）在规范冻结之后被修改",
        "运行启动期间请勿修改脚本，然后重新运行",
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
    "dataset.json_deep": (
        "{path}: not valid JSON here ({reason})",
        "flatten the records: Python's JSON reader stops at about 1,000 levels of nesting",
        "{path}：无法在此读取为 JSON（{reason}）",
        "请减少记录的嵌套层数：Python 的 JSON 读取器在约 1000 层嵌套时停止",
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
    "dataset.hf_missing": (
        "hf_dataset needs the Hugging Face 'datasets' library, which is not installed",
        "install it with: pip install 'assay[hf]'",
        "hf_dataset 需要 Hugging Face 的 'datasets' 库，但它没有安装",
        "请用以下命令安装：pip install 'assay[hf]'",
    ),
    "dataset.hf_load": (
        "hf_dataset({path!r}, split={split!r}): {reason}",
        "check the path, split and name; offline (HF_HUB_OFFLINE=1) only cached or local "
        "datasets load",
        "无法加载 hf_dataset({path!r}, split={split!r})：{reason}",
        "请检查 path、split 和 name；离线（HF_HUB_OFFLINE=1）时只能加载已缓存或本地的数据集",
    ),
    "dataset.hf_split": (
        "hf_dataset({path!r}): split={split!r} is not one split ({reason})",
        "name one split, such as split='test'",
        "hf_dataset({path!r})：split={split!r} 不是单个划分（{reason}）",
        "请指定一个划分，例如 split='test'",
    ),
    "dataset.file_kind": (
        "{path}: file_dataset reads .csv, .json, .jsonl and .ndjson files, not {suffix!r}",
        "rename the file, or call csv_dataset or json_dataset yourself",
        "{path}：file_dataset 只读取 .csv、.json、.jsonl 和 .ndjson 文件，而不是 {suffix!r}",
        "请重命名该文件，或直接调用 csv_dataset 或 json_dataset",
    ),
    "dataset.choice_target": (
        "{name}: sample {sample_id}: cannot shuffle its choices: the target {target!r} "
        "is not the letter of a choice (A to {last})",
        "write the target as the letter of the right choice ('A', 'B', ...), or a list of them",
        "{name}：样本 {sample_id}：无法打乱其选项：目标 {target!r} 不是某个选项的字母"
        "（A 到 {last}）",
        "请把目标写成正确选项的字母（'A'、'B'……）或这些字母的列表",
    ),
    "dataset.shuffle_choices": (
        "shuffle_choices={value!r} is neither true, false nor an integer seed",
        "use shuffle_choices=True for a random order, or an integer such as 42 to repeat it",
        "shuffle_choices={value!r} 既不是 True/False，也不是整数种子",
        "shuffle_choices=True 表示随机顺序，整数（如 42）表示可重复的顺序",
    ),
    "dataset.sample_json": (
        "{path}:{line}: the sample holds a value that is not JSON ({reason})",
        "keep inputs, targets and metadata to text, numbers, lists and objects; convert "
        "other values (images, arrays) in a record-to-sample function",
        "{path} 第 {line} 行：样本中有不是 JSON 的值（{reason}）",
        "输入、目标和元数据只能是文本、数字、列表和对象；其他值（图像、数组）请在由记录生成"
        "样本的函数中转换",
    ),
    "dataset.metadata_class": (
        "FieldSpec(metadata={kind}): {kind} is not a pydantic model, dataclass or msgspec.Struct",
        "pass one of those, or a list of the keys to keep",
        "FieldSpec(metadata={kind})：{kind} 不是 pydantic 模型、dataclass 或 msgspec.Struct",
        "请传入其中一种，或要保留的键的列表",
    ),
    "dataset.hf_json_text": (
        "hf_dataset({path!r}): auto_decode_json=False is not supported",
        "leave it out: Json columns come as Python values; json.dumps them in a "
        "record-to-sample function if you need the text",
        "hf_dataset({path!r})：不支持 auto_decode_json=False",
        "请去掉该参数：Json 列以 Python 值给出；如需文本，请在由记录生成样本的函数中 json.dumps",
    ),
    "dataset.csv_dialect": (
        "{path}: dialect {dialect!r} is not a CSV dialect (known: {known})",
        "use dialect='unix', 'excel' or 'excel-tab', or give delimiter=",
        "{path}：dialect {dialect!r} 不是 CSV 方言（已知：{known}）",
        "请使用 dialect='unix'、'excel' 或 'excel-tab'，或指定 delimiter=",
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
    # --- assay view ----------------------------------------------------------------------
    "view.no_folder": (
        "{path} is not a folder of runs",
        "give the folder assay run wrote to (default: runs) or one run's folder",
        "{path} 不是存放运行结果的目录",
        "请给出 assay run 写入的目录（默认 runs）或某次运行的目录",
    ),
    "view.no_port": (
        "cannot listen on {host} port {port}: {reason}",
        "choose another port with --port (0 picks a free one)",
        "无法在 {host} 的端口 {port} 上监听：{reason}",
        "请用 --port 换一个端口（0 表示任选空闲端口）",
    ),
    # --- plugins (entry points) and the .env file (issue 17) -----------------------------
    "plugin.load": (
        "plugin {name!r} ({value}, entry point group {group}) failed to load: {error}",
        "fix or reinstall the package that provides it, or uninstall it",
        "插件 {name!r}（{value}，入口点组 {group}）加载失败：{error}",
        "请修复或重新安装提供它的包，或将其卸载",
    ),
    "plugin.hook_failed": (
        "hook {name!r} failed in {event}: {error} (the run goes on; its evidence is unaffected)",
        "",
        "钩子 {name!r} 在 {event} 中出错：{error}（运行继续；证据不受影响）",
        "",
    ),
    "plugin.hook_type": (
        "hook {name!r} is a {kind}, not a subclass of assay.hooks.Hooks",
        "point the 'assay.hooks' entry point at a Hooks subclass",
        "钩子 {name!r} 是 {kind}，而不是 assay.hooks.Hooks 的子类",
        "请让 'assay.hooks' 入口点指向一个 Hooks 子类",
    ),
    "env_file.unreadable": (
        "cannot read the .env file {path}: {reason}",
        "fix the file, or skip it with --no-env-file",
        "无法读取 .env 文件 {path}：{reason}",
        "请修正该文件，或用 --no-env-file 跳过它",
    ),
    "run.event_loop": (
        "ASSAY_EVENT_LOOP={value} names no event loop",
        "set it to one of {choices}, or unset it (uvloop when installed)",
        "ASSAY_EVENT_LOOP={value} 不是可用的事件循环",
        "请设为 {choices} 之一，或不设置（已安装 uvloop 时使用 uvloop）",
    ),
}
