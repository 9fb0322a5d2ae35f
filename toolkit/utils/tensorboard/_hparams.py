"""The three ``hparams`` plugin summaries (experiment, session start, session end) that ``add_hparams`` writes."""

from __future__ import annotations

import logging

from google.protobuf import struct_pb2
from tensorboard.compat.proto.summary_pb2 import Summary, SummaryMetadata
from tensorboard.plugins.hparams.api_pb2 import (
    DataType,
    Experiment,
    HParamInfo,
    MetricInfo,
    MetricName,
    Status,
)
from tensorboard.plugins.hparams.metadata import (
    EXPERIMENT_TAG,
    PLUGIN_DATA_VERSION,
    PLUGIN_NAME,
    SESSION_END_INFO_TAG,
    SESSION_START_INFO_TAG,
)
from tensorboard.plugins.hparams.plugin_data_pb2 import HParamsPluginData, SessionEndInfo, SessionStartInfo

from ...tensor import Tensor
from ._convert import make_np

logger = logging.getLogger(__name__)


def _summary(tag: str, **content) -> Summary:
    data = HParamsPluginData(version=PLUGIN_DATA_VERSION, **content).SerializeToString()
    smd = SummaryMetadata(plugin_data=SummaryMetadata.PluginData(plugin_name=PLUGIN_NAME, content=data))
    return Summary(value=[Summary.Value(tag=tag, metadata=smd)])


def hparams(hparam_dict=None, metric_dict=None, hparam_domain_discrete=None) -> tuple:
    """(experiment, session_start_info, session_end_info) summaries for one hyperparameter run."""
    if not isinstance(hparam_dict, dict):
        logger.warning("parameter: hparam_dict should be a dictionary, nothing logged.")
        raise TypeError("parameter: hparam_dict should be a dictionary, nothing logged.")
    if not isinstance(metric_dict, dict):
        logger.warning("parameter: metric_dict should be a dictionary, nothing logged.")
        raise TypeError("parameter: metric_dict should be a dictionary, nothing logged.")
    hparam_domain_discrete = hparam_domain_discrete or {}
    if not isinstance(hparam_domain_discrete, dict):
        raise TypeError("parameter: hparam_domain_discrete should be a dictionary, nothing logged.")
    for k, v in hparam_domain_discrete.items():
        if k not in hparam_dict or not isinstance(v, list) or not all(isinstance(d, type(hparam_dict[k])) for d in v):
            raise TypeError(f"parameter: hparam_domain_discrete[{k}] should be a list of same type as hparam_dict[{k}].")

    infos = []
    ssi = SessionStartInfo()
    for k, v in hparam_dict.items():
        if v is None:
            continue
        if isinstance(v, Tensor):
            ssi.hparams[k].number_value = float(make_np(v).reshape(-1)[0])
            infos.append(HParamInfo(name=k, type=DataType.Value("DATA_TYPE_FLOAT64")))
            continue
        # bool is an int here, as in PyTorch: it is logged as a number
        if isinstance(v, (int, float)):
            field, dtype = "number_value", "DATA_TYPE_FLOAT64"
        elif isinstance(v, str):
            field, dtype = "string_value", "DATA_TYPE_STRING"
        else:
            raise ValueError("value should be one of int, float, str, bool, or torch.Tensor")
        setattr(ssi.hparams[k], field, v)
        domain = None
        if k in hparam_domain_discrete:
            domain = struct_pb2.ListValue(values=[struct_pb2.Value(**{field: d}) for d in hparam_domain_discrete[k]])
        infos.append(HParamInfo(name=k, type=DataType.Value(dtype), domain_discrete=domain))

    exp = Experiment(hparam_infos=infos, metric_infos=[MetricInfo(name=MetricName(tag=k)) for k in metric_dict])
    return (_summary(EXPERIMENT_TAG, experiment=exp),
            _summary(SESSION_START_INFO_TAG, session_start_info=ssi),
            _summary(SESSION_END_INFO_TAG, session_end_info=SessionEndInfo(status=Status.Value("STATUS_SUCCESS"))))
