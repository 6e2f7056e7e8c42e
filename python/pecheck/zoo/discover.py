"""Every architecture of the installed transformers (its model_type, as AutoConfig knows it), its
modeling module and config class, and the Subjects the family builders find in it."""
import importlib
import inspect
import re
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
            refused = ""
        except Exception as e:  # noqa: BLE001 - classified below by its source, with the error as the reason
            refused = f"{type(e).__name__}: {str(e).splitlines()[0][:120]}"
        flat = arch.replace("-", "_")
        for path in (f"transformers.models.{name}.modeling_{name}",
                     f"transformers.models.{name}.modeling_{flat}",
                     f"transformers.models.deprecated.{name}.modeling_{name}"):
            try:
                module = importlib.import_module(path)
                if refused:  # transformers 5 validates config classes strictly: a default that fails is lost
                    skip = _classify_file(arch, path)
                    if skip.family in ("none",):
                        return Skip(arch, "none", f"its config class cannot be built with its defaults ({refused})")
                    skip.reason = (f"its config class cannot be built with its defaults ({refused}); it has "
                                   f"{skip.reason}")
                    return skip
                return config_cls, module
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
    try:
        if getattr(config, "num_attention_heads", None) or getattr(config, "max_position_embeddings", None):
            return config
    except RuntimeError:  # a heterogeneous config (transformers 5): its heads are per layer, it is the text model
        return config
    sub = getattr(config, "text_config", None)
    return sub if sub is not None else config


def _defined_in(module, cls):
    return inspect.isclass(cls) and cls.__module__ == module.__name__


def _two_dimensional(cls):
    """A vision tower's rotary class that is not a 1-D RoPE over a sequence: a Vision one without
    transformers 5's compute_default_rope_parameters (DeepSeek-OCR 2's vision encoder, a decoder run as
    an encoder, rotates its patch sequence by a plain RoPE)."""
    return "Vision" in cls.__name__ and not hasattr(cls, "compute_default_rope_parameters")


def _rotary_names(src):
    return set(re.findall(r"\b(\w*Rotary\w*Embedding\w*)\(", src))


def rotary_class_for(module, config):
    """The 1-D rotary class the model built from `config` instantiates: the one named in the __init__
    of a model class of the module whose config_class is the config's class (a module holds the text
    model's and the vision tower's); where the module has no model class of that config, its only
    non-vision rotary class."""
    found, models = set(), 0
    for c in vars(module).values():
        if _defined_in(module, c) and getattr(c, "config_class", None) is type(config):
            models += 1
            try:
                found |= _rotary_names(inspect.getsource(c.__init__))
            except (OSError, TypeError):
                continue
    classes = [getattr(module, n) for n in sorted(found) if _defined_in(module, getattr(module, n, None))]
    classes = [c for c in classes if not _two_dimensional(c)]
    if len(classes) == 1:
        return classes[0]
    if found:  # only vision rotary modules (a 2-D RoPE over image patches): see vision_rotary()
        return None
    if models:  # built deeper (an attention or encoder layer): the one whose __init__ takes this config class
        typed = [c for c in _instantiated(module) if _config_annotation(c) is type(config)]
        return typed[0] if len(typed) == 1 else None
    rotary = [c for n, c in vars(module).items() if _defined_in(module, c) and n.endswith("RotaryEmbedding")
              and "Vision" not in n and "Linear" not in n and "Dynamic" not in n and "Unpadded" not in n
              and _config_annotation(c) in (type(config), inspect.Parameter.empty, None)]
    return rotary[0] if len(rotary) == 1 else None


def text_model_type(arch, config):
    """The model_type whose config class is this composite's text config (Qwen2-VL's text model is
    `qwen2_vl_text`), or None: its positions are checked under that type."""
    from transformers.models.auto.configuration_auto import CONFIG_MAPPING_NAMES

    sub = getattr(config, "text_config", None)
    if sub is None or sub is config:
        return None
    name = type(sub).__name__
    return next((t for t, n in CONFIG_MAPPING_NAMES.items() if n == name and t != arch), None)


def module_key(module):
    """The modeling module's short name (`qwen2_vl` for modeling_qwen2_vl): several model_types share
    one module (Qwen2-VL's text and vision towers), and what is written down per module is keyed by it."""
    return module.__name__.rsplit(".", 1)[-1].removeprefix("modeling_")


def _instantiated(module):
    """The non-vision rotary classes the module's classes instantiate anywhere."""
    names = set()
    for c in vars(module).values():
        if _defined_in(module, c) and "__init__" in vars(c):
            try:
                names |= _rotary_names(inspect.getsource(c.__init__))
            except (OSError, TypeError):
                continue
    return [getattr(module, n) for n in sorted(names) if "Vision" not in n
            and _defined_in(module, getattr(module, n, None))]


def _config_annotation(cls):
    try:
        return inspect.signature(cls.__init__).parameters["config"].annotation
    except (KeyError, TypeError, ValueError):
        return None


def rotary_built(module, config):
    """The names of the module's rotary classes that the classes built from `config` instantiate."""
    from .others import config_classes

    names = set()
    for c in config_classes(module, config):
        if "__init__" in vars(c):
            try:
                names |= set(re.findall(r"\b(\w*(?:Rotary|Rope)\w*)\(", inspect.getsource(c.__init__)))
            except (OSError, TypeError):
                continue
    return {n for n in names if _defined_in(module, getattr(module, n, None))}


def vision_rotary(module, config):
    """The rotary classes of a vision tower (a 2-D RoPE over image patches) that the classes built from
    `config` instantiate. A config is a vision tower's when it states a patch or image size, or its
    rotary classes are all Vision ones."""
    names = rotary_built(module, config)
    image = any(getattr(config, k, None) for k in ("patch_size", "image_size")) or \
        "vision" in type(config).__name__.lower()
    if names and (image or all("Vision" in n or "ViT" in n for n in names)):
        return sorted(names)
    return []


def _part_configs(arch, config):
    """(model_type, sub-config) for each sub-config of `config` whose class is another model_type's
    config class, each model_type once, in attribute order."""
    from transformers.models.auto.configuration_auto import CONFIG_MAPPING_NAMES

    by_class = {n: t for t, n in CONFIG_MAPPING_NAMES.items() if t != arch}
    found = {}
    for key, value in sorted(vars(config).items()):
        if hasattr(value, "to_dict") and type(value).__name__ in by_class:
            found.setdefault(by_class[type(value).__name__], value)
    return list(found.items())


def parts_building(arch, module, config, names):
    """The parts (model_types, as parts()) whose own configs build one of the rotary classes `names`:
    BLT's local encoder builds BltRotaryEmbedding, DeepSeek-OCR 2's encoder its vision rotary, while
    Sapiens2's head builds none of its backbone's."""
    return [t for t, sub in _part_configs(arch, config) if rotary_built(module, sub) & set(names)]


def parts(arch, config):
    """The model_types of this sweep a composite config is made of (Qwen2.5-Omni's thinker and talker,
    BLT's encoder and decoder): its sub-configs whose classes are other model_types' config classes."""
    return [t for t, _ in _part_configs(arch, config)]


def rotary_owner(arch, module, config):
    """The model_type whose config builds the rotary module the classes of `config` use (Mimi's
    encoder and decoder run MimiRotaryEmbedding(config: MimiConfig)), or None."""
    from transformers.models.auto.configuration_auto import CONFIG_MAPPING_NAMES

    from .others import config_classes

    by_class = {n: t for t, n in CONFIG_MAPPING_NAMES.items() if t != arch}
    for c in config_classes(module, config):
        try:
            src = inspect.getsource(c.__init__) if "__init__" in vars(c) else ""
        except (OSError, TypeError):
            continue
        for name in _rotary_names(src):
            owner = _config_annotation(getattr(module, name, None))
            if inspect.isclass(owner) and owner is not type(config) and owner.__name__ in by_class:
                return by_class[owner.__name__], name
    return None
