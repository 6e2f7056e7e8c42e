"""The CPU a benchmark ran on, as every figure must name it: /proc/cpuinfo's model name, family
and model (these machines differ a lot), or platform.processor() where there is none."""
import platform


def cpu() -> str:
    info = {}
    for line in open("/proc/cpuinfo"):
        key, _, value = line.partition(":")
        info.setdefault(key.strip(), value.strip())
    if "model name" not in info:
        return platform.processor()
    return f"{info['model name']}, CPU family {info.get('cpu family')}, model {info.get('model')}"
