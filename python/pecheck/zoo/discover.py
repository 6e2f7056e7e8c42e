"""Every architecture of the installed transformers (its model_type, as AutoConfig knows it), its
modeling module and config class, and the Subjects the family builders find in it."""
import importlib
import warnings

from .subject import Skip


def architectures():
    from transformers.models.auto.configuration_auto import CONFIG_MAPPING_NAMES

    return sorted(CONFIG_MAPPING_NAMES)


def load(arch):
    """(config class, modeling module) or a Skip saying why there is none."""
    from transformers.models.auto.configuration_auto import CONFIG_MAPPING, model_type_to_module_name

    name = model_type_to_module_name(arch)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            config_cls = CONFIG_MAPPING[arch]
        except Exception as e:  # noqa: BLE001 - a config that cannot be imported is a reported skip
            return Skip(arch, "none", f"config class not importable: {type(e).__name__}: {e}".splitlines()[0])
        try:
            config_cls()
        except Exception as e:  # noqa: BLE001
            return Skip(arch, "composite", "its config cannot be built alone (it is made of other models' configs: "
                                           f"{str(e).splitlines()[0][:90]})")
        flat = arch.replace("-", "_")
        for path in (f"transformers.models.{name}.modeling_{name}",
                     f"transformers.models.{name}.modeling_{flat}",
                     f"transformers.models.deprecated.{name}.modeling_{name}"):
            try:
                return config_cls, importlib.import_module(path)
            except ModuleNotFoundError as e:
                if e.name is not None and not path.startswith(e.name):
                    return Skip(arch, "none", f"modeling module needs {e.name}, not installed")
            except Exception as e:  # noqa: BLE001 - classified by its source text, with why it was not run
                why = f"modeling module not importable with this torch: {type(e).__name__}: {str(e).splitlines()[0][:90]}"
                skip = _classify_file(arch, path)
                skip.reason = why + ("" if skip.family == "none" else f"; it has {skip.reason}")
                return skip
    return Skip(arch, "none", f"no PyTorch modeling module (transformers.models.{name}.modeling_{name})")


def _classify_file(arch, path):
    import importlib.util

    from .others import classify_source

    spec = importlib.util.find_spec(path)
    with open(spec.origin) as f:
        return classify_source(arch, f.read())


def text_config(config):
    """The config that describes the text model: the config itself, or its text_config (Aria, Mllama,
    AltCLIP: a composite whose text part carries the positions)."""
    if getattr(config, "num_attention_heads", None) or getattr(config, "max_position_embeddings", None):
        return config
    sub = getattr(config, "text_config", None)
    return sub if sub is not None else config
