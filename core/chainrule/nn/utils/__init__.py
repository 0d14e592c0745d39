"""``nn.utils``: gradient clipping, parameter/vector conversion, stateless calls and
variable-length sequences (``rnn``)."""
from . import parametrizations, parametrize, rnn, stateless  # noqa: F401
from .hooked_norms import (remove_spectral_norm, remove_weight_norm, spectral_norm,  # noqa: F401
                           weight_norm)
from .clip_grad import clip_grad_norm, clip_grad_norm_, clip_grad_value_  # noqa: F401
from .convert_parameters import parameters_to_vector, vector_to_parameters  # noqa: F401
