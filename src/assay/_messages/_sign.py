"""Messages about keys, signing a run and checking its signature (``--trust``)."""

from __future__ import annotations

MESSAGES: dict[str, tuple[str, str, str, str]] = {
    "sign.no_crypto": (
        "signing needs the 'cryptography' package, which is not installed",
        "install it: pip install 'assay[sign]'",
        "签名需要 'cryptography' 包，但它没有安装",
        "请安装：pip install 'assay[sign]'",
    ),
    "sign.key_exists": (
        "{path} already exists; assay keygen never overwrites a key",
        "choose another PATH, or move the old key away first",
        "{path} 已存在；assay keygen 不会覆盖密钥",
        "请换一个 PATH，或先移走旧密钥",
    ),
    "sign.key_unwritable": (
        "cannot write the key {path} ({reason})",
        "choose a folder you can write to",
        "无法写入密钥 {path}（{reason}）",
        "请选择一个可写的目录",
    ),
    "sign.key_no_name": (
        "'{path}' names no file: assay keygen writes PATH and PATH.pub",
        "give a file name, e.g. 'assay keygen keys/ci' writes keys/ci and keys/ci.pub",
        "'{path}' 没有指明文件：assay keygen 写入 PATH 和 PATH.pub",
        "请给出文件名，例如 'assay keygen keys/ci' 会写入 keys/ci 和 keys/ci.pub",
    ),
    "sign.key_bad": (
        "{path} is not a usable Ed25519 key: {reason}",
        "make one with 'assay keygen PATH' or 'openssl genpkey -algorithm ed25519 -out PATH' "
        "(unencrypted PEM); trust its public half (PATH.pub)",
        "{path} 不是可用的 Ed25519 密钥：{reason}",
        "用 'assay keygen PATH' 或 'openssl genpkey -algorithm ed25519 -out PATH' 生成"
        "（未加密的 PEM）；信任其公钥（PATH.pub）",
    ),
    "sign.unsealed": (
        "{path} is not sealed (status {status}): only a complete or interrupted run is signed",
        "finish it with 'assay resume {path}', then sign it",
        "{path} 尚未封存（状态 {status}）：只能签名已完成或已中断的运行",
        "先用 'assay resume {path}' 完成它，再签名",
    ),
    "sign.locked": (
        "{path} is being written by another assay process",
        "wait for it to finish, then sign the run",
        "{path} 正被另一个 assay 进程写入",
        "等它结束后再签名",
    ),
    "sign.unreadable": (
        "the signature {path} cannot be read: {reason}",
        "sign the run again with 'assay sign RUN --key KEY'; do not trust it until then",
        "签名 {path} 无法读取：{reason}",
        "请用 'assay sign RUN --key KEY' 重新签名；在此之前不要信任它",
    ),
    "sign.unsigned": (
        "{path} is not signed (no attestation.dsse.json); --trust wants a signature by {trusted}",
        "ask its author to sign it ('assay sign RUN --key KEY'); do not trust it until then",
        "{path} 没有签名（没有 attestation.dsse.json）；--trust 要求 {trusted} 的签名",
        "请其作者签名（'assay sign RUN --key KEY'）；在此之前不要信任它",
    ),
    "sign.other_key": (
        "the signature of {path} is by {keyids}, not by a trusted key ({trusted})",
        "trust the key that signed it only if you know whose it is",
        "{path} 的签名来自 {keyids}，不是受信任的密钥（{trusted}）",
        "只有确认签名密钥属于谁时才信任它",
    ),
    "sign.bad_signature": (
        "the signature of {path} by {keyid} does not verify: the attestation was changed",
        "do not trust this run; ask its author for the original",
        "{path} 由 {keyid} 所作的签名校验失败：签名文件被改动过",
        "不要信任此运行；请向作者索取原件",
    ),
    "sign.changed": (
        "the signature of {path} by {keyid} is over another manifest.json "
        "(signed sha256 {signed}…, now {now}…): the run changed after it was signed",
        "do not trust this run; ask its author for the signed original",
        "{path} 由 {keyid} 所作的签名针对的是另一个 manifest.json"
        "（签名时 sha256 {signed}…，现在 {now}…）：运行在签名后被改动",
        "不要信任此运行；请向作者索取签名时的原件",
    ),
    "sign.predicate": (
        "the signature of {path} is valid, but its statement's {field} is not the run's",
        "the signer signed something else; do not trust this run",
        "{path} 的签名有效，但其声明中的 {field} 与运行不符",
        "签名者签的是别的内容；不要信任此运行",
    ),
    "out.signed_by": (
        "signature: signed by {keyids}, over this manifest.json "
        "(not checked against a key you trust: add --trust KEY.pub)",
        "",
        "签名：由 {keyids} 签名，针对当前的 manifest.json"
        "（未用受信任的密钥检查：请加 --trust KEY.pub）",
        "",
    ),
    "out.signed_other_manifest": (
        "signature: claims to be by {keyids}, but over another manifest.json "
        "(the run changed after it was signed, or the signature is another run's)",
        "",
        "签名：声称由 {keyids} 签名，但针对的是另一个 manifest.json"
        "（运行在签名后被改动，或签名属于别的运行）",
        "",
    ),
    "out.signature_unreadable": (
        "signature: attestation.dsse.json cannot be read ({reason})",
        "",
        "签名：attestation.dsse.json 无法读取（{reason}）",
        "",
    ),
    "out.unsigned": ("signature: none (unsigned run)", "", "签名：无（未签名的运行）", ""),
    "out.signed_trusted": (
        "signature: signed by {keyid}, a trusted key; it covers manifest.json, "
        "which binds the event chain's head and every file's digest",
        "",
        "签名：由受信任的密钥 {keyid} 签名；它覆盖 manifest.json，"
        "而后者绑定事件链的末尾哈希和每个文件的摘要",
        "",
    ),
    "out.signed_now": (
        "signed {path} with {keyid}: {file}",
        "",
        "已用 {keyid} 签名 {path}：{file}",
        "",
    ),
    "out.keygen": (
        "wrote {private} (private key: keep it secret) and {public}; fingerprint {keyid}",
        "",
        "已写入 {private}（私钥：请保密）和 {public}；指纹 {keyid}",
        "",
    ),
}
