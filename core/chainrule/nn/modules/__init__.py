"""The layers of ``chainrule.nn`` (re-exported there)."""
from .module import Module  # noqa: F401
from .container import (ModuleDict, ModuleList, ParameterDict, ParameterList,  # noqa: F401
                        Sequential)
from .linear import Bilinear, Flatten, Identity, Linear, Unflatten  # noqa: F401
from .conv import Conv1d, Conv2d, Conv3d, ConvTranspose1d, ConvTranspose2d  # noqa: F401
from .conv import ConvTranspose3d  # noqa: F401
from .upsampling import *  # noqa: F401,F403
from .activation import *  # noqa: F401,F403
from .loss import *  # noqa: F401,F403
from .dropout import *  # noqa: F401,F403
from .pooling import *  # noqa: F401,F403
from .normalization import *  # noqa: F401,F403
from .sparse import Embedding, EmbeddingBag  # noqa: F401
from .padding import *  # noqa: F401,F403
from .distance import *  # noqa: F401,F403
from .rnn import GRU, GRUCell, LSTM, LSTMCell, RNN, RNNBase, RNNCell, RNNCellBase  # noqa: F401
from .attention import MultiheadAttention  # noqa: F401
from .transformer import (Transformer, TransformerDecoder, TransformerDecoderLayer,  # noqa: F401
                          TransformerEncoder, TransformerEncoderLayer)
from .lazy import *  # noqa: F401,F403
from .adaptive import AdaptiveLogSoftmaxWithLoss  # noqa: F401
