"""Messages about running on a Dask cluster (``--cluster``)."""

from __future__ import annotations

MESSAGES: dict[str, tuple[str, str, str, str]] = {
    "run.cluster": (
        "cannot use the Dask cluster at {address}: {reason}",
        "start a scheduler and at least one worker (dask scheduler; dask worker ADDRESS), "
        "or check the --cluster address",
        "无法使用位于 {address} 的 Dask 集群：{reason}",
        "请启动调度器和至少一个工作进程（dask scheduler；dask worker 地址），或检查 --cluster 地址",
    ),
    "cluster.unbuilt": (
        "--cluster: {failed} of {workers} workers cannot build {what} ({worker}: {why})",
        "run each worker where it sees {where} at the same path",
        "--cluster：{workers} 个工作进程中有 {failed} 个无法构建 {what}（{worker}：{why}）",
        "请让每个工作进程在相同路径下看到 {where}",
    ),
    "cluster.other_code": (
        "--cluster: {who} runs other assay code ({theirs}) than this driver ({mine})",
        "start the scheduler and the workers from the same assay as the driver (restart "
        "them after updating it)",
        "--cluster：{who} 运行的 assay 代码（{theirs}）与本驱动进程的（{mine}）不同",
        "请用与驱动进程相同的 assay 启动调度器和工作进程（更新后请重启它们）",
    ),
    "run.cluster_lost": (
        "lost the Dask cluster at {address}: {reason}; the run is interrupted, finished "
        "trials are kept in {path}",
        "once a scheduler and workers are up, finish it with: assay resume {path} "
        "--cluster {address}",
        "与位于 {address} 的 Dask 集群失去联系：{reason}；运行已中断，已完成的试验保存在 {path}",
        "调度器和工作进程恢复后，可用以下命令完成运行：assay resume {path} --cluster {address}",
    ),
    "run.cluster_other_code": (
        "worker {worker} of the Dask cluster at {address} runs other assay code ({theirs}) "
        "than this driver ({mine}): it joined after the run started, and its answers are not "
        "taken; the run is interrupted, finished trials are kept in {path}",
        "stop that worker or restart it from the same assay as the driver, then finish the "
        "run with: assay resume {path} --cluster {address}",
        "位于 {address} 的 Dask 集群的工作进程 {worker} 运行的 assay 代码（{theirs}）"
        "与本驱动进程的（{mine}）不同：它在运行开始后才加入，其答案不予采用；"
        "运行已中断，已完成的试验保存在 {path}",
        "请停止该工作进程，或用与驱动进程相同的 assay 重启它，然后用以下命令完成运行："
        "assay resume {path} --cluster {address}",
    ),
}
