"""Bayesian structure learning: the posterior over directed acyclic graphs (DAGs) on n nodes.

State encoding
--------------
A state x ∈ {0,1}^{n(n−1)} is the off-diagonal adjacency matrix of a directed
graph, row-major with the diagonal skipped: bit k is the ordered pair
``edge_pairs[k] = (i, j)``, i ≠ j, and means the edge i → j. The parents of
node j are summarised by the bit mask mask_j = Σ_{i ∈ pa(j)} 2^i.

Target
------
    log p̃(G) = Σ_j s(j, pa_G(j))   if G is acyclic,   −∞ otherwise,

where the local score s(j, P) = log p(D_j | D_P) + log π(j, P) is a
family's marginal likelihood plus its share of the graph prior. The scores are
tabulated once in ``local_scores[j, mask]`` (n × 2^n; −∞ where the mask
contains j itself or has more than ``max_parents`` parents), so p̃(G) is a sum
of n table look-ups. Both scores below are *score equivalent*: Markov
equivalent DAGs (same skeleton and v-structures) get the same marginal
likelihood, so only the graph prior can tell them apart.

BGe score (Gaussian data)
-------------------------
Geiger & Heckerman (2002), with the correction of Kuipers, Moffa & Heckerman
(2014), in the parametrisation of Kuipers & Moffa (2017, Partition MCMC):
x ~ N(μ, W⁻¹), W ~ Wishart(a_w, T₀⁻¹) (density ∝ |W|^{(a_w−n−1)/2} e^{−tr(T₀W)/2}),
μ | W ~ N(μ₀, (a_μW)⁻¹), with μ₀ = 0 and T₀ = t·I, t = a_μ(a_w − n − 1)/(a_μ + 1)
(the prior mean of the covariance of x is then I). The posterior scale is

    T_N = T₀ + (N−1)·S + (a_μN/(a_μ+N)) x̄x̄ᵀ,    S the sample covariance.

The marginal likelihood of the sub-vector x_Y, |Y| = k, is the Normal–Wishart
evidence with a_w replaced by a_w − n + k (the marginal of a Wishart on a
k × k block; this is the 2014 correction):

    log p(D_Y) = (k/2) log(a_μ/(a_μ+N)) − (kN/2) log π
                 + log Γ_k((a_w−n+k+N)/2) − log Γ_k((a_w−n+k)/2)
                 + ((a_w−n+k)/2) log det T₀[Y,Y] − ((a_w−n+k+N)/2) log det T_N[Y,Y].

The local score is log p(D_{P∪j}) − log p(D_P) with |P| = l. The
multivariate gamma functions telescope, Γ_{l+1}(a + ½)/Γ_l(a) = π^{l/2} Γ(a + ½),
and det T₀ = t^k, leaving

    log p(D_j | D_P) = log Γ((a_w+N−n+l+1)/2) − log Γ((a_w−n+l+1)/2) − (N/2) log π
                       + ½ log(a_μ/(a_μ+N)) + ((a_w−n+2l+1)/2) log t
                       + ½[(a_w+N−n+l) log det T_N[P,P] − (a_w+N−n+l+1) log det T_N[P∪j,P∪j]].

The log-determinants of all 2^n principal sub-matrices of T_N are computed
once (stacked ``slogdet`` grouped by size). a_w must exceed n + 1 so that t > 0
(a proper Wishart only needs a_w > n − 1, but T₀ = t·I needs t > 0).

BDeu score (categorical data)
-----------------------------
Heckerman, Geiger & Chickering (1995): with r_j the number of levels of node j
(its largest code + 1), q_j = Π_{i∈P} r_i parent configurations, N_jk the
count of configuration k and N_jkv of configuration k with x_j = v, and
equivalent sample size α (α_jk = α/q_j, α_jkv = α/(q_j r_j)):

    log p(D_j | D_P) = Σ_k [log Γ(α_jk) − log Γ(α_jk + N_jk)]
                       + Σ_{k,v} [log Γ(α_jkv + N_jkv) − log Γ(α_jkv)].

Configurations (and cells) that never occur contribute 0, so only the observed
ones are visited.

Graph prior
-----------
"uniform": π(G) ∝ 1; "sparse": log π(G) = −sparsity·|E(G)|, i.e.
−sparsity·|P| in each local score. ``max_parents`` sets the prior to 0 (score −∞)
on DAGs with a node of larger in-degree.

Synthetic data
--------------
``er_dag``: an Erdős–Rényi DAG ER(n, d) — a uniformly random node order, each
of the n(n−1)/2 order-consistent edges present independently with probability
d/(n−1), so the expected number of edges is nd/2 (d above n − 1 is capped:
edge probability 1). ``linear_gaussian_data``:
x_j = Σ_{i∈pa(j)} w_ij x_i + ε_j with w_ij uniform on ±[0.5, 2] (random sign)
and ε_j ~ N(0, 1); N samples, seeded. For ``score="bdeu"`` each synthetic
variable is made binary: 1 where it exceeds its sample median, 0 otherwise.

Enumeration
-----------
For n ≤ 5 (dim ≤ 20) all 2^{n(n−1)} graphs are screened for acyclicity by
repeatedly deleting the nodes with no remaining parents (vectorised on parent
bit masks); 3, 25, 543 and 29,281 of them are DAGs for n = 2…5 (OEIS A003024).

References: D. Geiger & D. Heckerman, Ann. Statist. 30 (2002) 1412–1440;
J. Kuipers, G. Moffa & D. Heckerman, Ann. Statist. 42 (2014) 1689–1691;
J. Kuipers & G. Moffa, J. Amer. Statist. Assoc. 112 (2017) 282–299;
D. Heckerman, D. Geiger & D. M. Chickering, Machine Learning 20 (1995) 197–243.
"""

from __future__ import annotations

import numpy as np
import param
from scipy.special import gammaln

from .base import Target, TargetSize, all_states, array_shape, stored_bytes
from .picture import ImageAxes

#: Largest n for which ``enumerate()`` / ``enumerate_dags()`` list all 2^{n(n−1)} graphs.
MAX_ENUMERATE_NODES = 5
#: Rows per chunk when scoring all graphs.
CHUNK = 65536


# -- synthetic data ----------------------------------------------------------------------
def er_dag(n: int, expected_degree: float, rng: np.random.Generator) -> np.ndarray:
    """An Erdős–Rényi DAG ER(n, d) as an ``(n, n)`` uint8 adjacency matrix.

    A uniformly random node order; each order-consistent edge is present with probability min(1, d/(n−1)).
    """
    order = rng.permutation(n)
    forward = np.triu(rng.random((n, n)) < min(1.0, expected_degree / (n - 1)), k=1)
    adjacency = np.zeros((n, n), dtype=np.uint8)
    adjacency[np.ix_(order, order)] = forward
    return adjacency


def linear_gaussian_data(adjacency: np.ndarray, n_samples: int, rng: np.random.Generator) -> np.ndarray:
    """N samples of x = xW + ε (row vectors): w_ij ~ ±U[0.5, 2] on the edges i → j, ε ~ N(0, I); ``(N, n)``.

    W is nilpotent on a DAG, so x = ε (I − W)⁻¹ with no need for a topological order.
    """
    n = len(adjacency)
    magnitudes = rng.uniform(0.5, 2.0, size=(n, n))
    signs = rng.choice([-1.0, 1.0], size=(n, n))
    weights = adjacency * magnitudes * signs
    noise = rng.normal(size=(n_samples, n))
    return noise @ np.linalg.inv(np.eye(n) - weights)


def binarise_at_median(data: np.ndarray) -> np.ndarray:
    """1 where a value exceeds its column's median, else 0 (the BDeu version of the synthetic data)."""
    return (data > np.median(data, axis=0)).astype(np.int64)


# -- bit masks and acyclicity -----------------------------------------------------------------
def acyclic_from_masks(masks: np.ndarray) -> np.ndarray:
    """Acyclicity of each graph given its ``(batch, n)`` parent masks; ``(batch,)`` bool.

    Peels off, n times, every node with no parent among the remaining nodes; a
    graph is acyclic iff no node remains (a cycle's nodes never lose all parents).
    """
    n = masks.shape[1]
    bits = np.left_shift(np.int64(1), np.arange(n, dtype=np.int64))
    remaining = np.full(masks.shape[0], 2**n - 1, dtype=np.int64)
    for _ in range(n):
        free = (masks & remaining[:, None]) == 0
        remaining &= ~np.where(free, bits, 0).sum(axis=1)
    return remaining == 0


def _members(masks: np.ndarray, n: int) -> np.ndarray:
    """``(len(masks), n)`` 0/1 membership of the nodes in each mask."""
    return (masks[:, None] >> np.arange(n)) & 1


# -- local scores -----------------------------------------------------------------------------
def subset_logdets(matrix: np.ndarray) -> np.ndarray:
    """log det of every principal sub-matrix M[Y, Y] of a positive-definite M, indexed by the mask of Y (∅ → 0)."""
    n = len(matrix)
    masks = np.arange(2**n)
    members = _members(masks, n)
    sizes = members.sum(axis=1)
    logdets = np.zeros(2**n)
    for k in range(1, n + 1):
        group = np.flatnonzero(sizes == k)
        idx = np.nonzero(members[group])[1].reshape(group.size, k)
        logdets[group] = np.linalg.slogdet(matrix[idx[:, :, None], idx[:, None, :]])[1]
    return logdets


def _exclude_self(scores: np.ndarray) -> np.ndarray:
    """Set s(j, P) = −∞ where j ∈ P."""
    own = _members(np.arange(scores.shape[1]), scores.shape[0]).T
    return np.where(own == 1, -np.inf, scores)


def bge_local_scores(data: np.ndarray, am: float, aw: float) -> np.ndarray:
    """BGe log p(D_j | D_P) for every node j and parent mask P; ``(n, 2^n)``, −∞ where j ∈ P."""
    N, n = data.shape
    t = am * (aw - n - 1) / (am + 1)
    mean = data.mean(axis=0)
    centred = data - mean
    posterior_scale = t * np.eye(n) + centred.T @ centred + (am * N / (am + N)) * np.outer(mean, mean)
    logdets = subset_logdets(posterior_scale)
    masks = np.arange(2**n)
    l = np.bitwise_count(masks).astype(np.float64)
    constant = (gammaln((aw + N - n + l + 1) / 2) - gammaln((aw - n + l + 1) / 2) - (N / 2) * np.log(np.pi)
                + 0.5 * np.log(am / (am + N)) + ((aw - n + 2 * l + 1) / 2) * np.log(t))
    families = masks[None, :] | (1 << np.arange(n))[:, None]
    scores = constant + 0.5 * ((aw + N - n + l) * logdets - (aw + N - n + l + 1) * logdets[families])
    return _exclude_self(scores)


def _configurations(columns: np.ndarray) -> np.ndarray:
    """Index 0…K−1 of each sample's joint configuration of the given columns (K observed configurations)."""
    return np.unique(columns, axis=0, return_inverse=True)[1].ravel()


def bdeu_local_scores(codes: np.ndarray, ess: float) -> np.ndarray:
    """BDeu log p(D_j | D_P) for every node j and parent mask P; ``(n, 2^n)``, −∞ where j ∈ P."""
    n = codes.shape[1]
    levels = codes.max(axis=0) + 1
    scores = np.zeros((n, 2**n))
    for mask, member in enumerate(_members(np.arange(2**n), n)):
        parents = np.flatnonzero(member)
        config = _configurations(codes[:, parents])
        configuration_counts = np.bincount(config)
        q = np.prod(levels[parents].astype(np.float64))
        for j in np.flatnonzero(member == 0):
            r = levels[j]
            cell_counts = np.unique(config * r + codes[:, j], return_counts=True)[1]
            a_config, a_cell = ess / q, ess / (q * r)
            scores[j, mask] = (configuration_counts.size * gammaln(a_config)
                               - gammaln(a_config + configuration_counts).sum()
                               + gammaln(a_cell + cell_counts).sum() - cell_counts.size * gammaln(a_cell))
    return _exclude_self(scores)


# -- data validation ----------------------------------------------------------------------------
def _as_data(data, score: str) -> np.ndarray:
    """``data`` as a validated ``(N, n)`` array: float64 for BGe, int64 category codes for BDeu."""
    arr = np.asarray(data)
    if arr.ndim != 2:
        raise ValueError(f"data must be a 2-D array (N samples × n variables); got shape {arr.shape}")
    if not 2 <= arr.shape[1] <= 12:
        raise ValueError(f"data must have between 2 and 12 columns (one per node); got {arr.shape[1]}")
    if arr.shape[0] < 1:
        raise ValueError("data needs at least one sample (row)")
    if not (np.issubdtype(arr.dtype, np.number) or np.issubdtype(arr.dtype, np.bool_)):
        raise ValueError(f"data must be numeric; got dtype {arr.dtype}")
    arr = arr.astype(np.float64)
    if not np.all(np.isfinite(arr)):
        raise ValueError("data must contain only finite values (no NaN or inf)")
    if score == "bge":
        return arr
    if np.any(arr != np.round(arr)):
        raise ValueError("BDeu data must hold integer category codes 0, 1, …, r−1; found non-integer values")
    if np.any(arr < 0):
        raise ValueError("BDeu data must hold non-negative category codes; found negative values")
    return arr.astype(np.int64)


class DagStructure(Target):
    """Bayesian network structure learning: the posterior over DAGs given data (BGe or BDeu score).

    Attributes set by ``_build()``: ``edge_pairs`` ((n(n−1), 2) int, bit k ↔ edge i → j),
    ``local_scores`` ((n, 2^n) float64, graph prior included), ``data_matrix`` (the (N, n)
    data actually scored: float64 for BGe, int64 codes for BDeu), ``true_adjacency``
    ((n, n) uint8 generating DAG of synthetic data, None for user data) and ``node_names``.
    """

    registry_name = "dag"
    #: Parameters that apply to one score or prior only (see ``dashboard.forms``).
    parameter_conditions = {"equivalent_sample_size": ("score", ("bdeu",)), "am": ("score", ("bge",)),
                            "aw": ("score", ("bge",)), "sparsity": ("graph_prior", ("sparse",))}
    n_nodes = param.Integer(5, bounds=(2, 12),
                            doc="Number of nodes n; the state is the n(n−1) off-diagonal adjacency bits. "
                                "Taken from data.shape[1] when data is given.")
    score = param.Selector(default="bge", objects=["bge", "bdeu"],
                           doc="Marginal likelihood: BGe (Gaussian data) or BDeu (categorical data).")
    data = param.Parameter(None, doc="Your data (N × n): real values for BGe, category codes 0…r−1 for BDeu. "
                                     "None: synthetic linear-Gaussian data from an ER DAG (median-split for BDeu).")
    expected_degree = param.Number(2.0, bounds=(0.5, 11.0),
                                   doc="Synthetic data: expected degree d of the ER DAG (edge probability "
                                       "d/(n−1)); values above n − 1 give the complete DAG.")
    n_samples = param.Integer(200, bounds=(1, 100_000), doc="Synthetic data: number of samples N.")
    seed = param.Integer(0, bounds=(0, 2**32 - 1), doc="Synthetic data: seed of the graph, weights and noise.")
    graph_prior = param.Selector(default="uniform", objects=["uniform", "sparse"],
                                 doc="Prior over DAGs: uniform, or sparse (log prior −sparsity per edge).")
    sparsity = param.Number(1.0, bounds=(0.0, None), doc="Sparse prior: log-prior penalty per edge.")
    max_parents = param.Integer(None, bounds=(0, 11), allow_None=True,
                                doc="Largest in-degree allowed (score −∞ beyond); None or ≥ n − 1: no limit.")
    equivalent_sample_size = param.Number(1.0, bounds=(0.0, None), inclusive_bounds=(False, True),
                                          doc="BDeu: equivalent sample size α.")
    am = param.Number(1.0, bounds=(0.0, None), inclusive_bounds=(False, True),
                      doc="BGe: a_μ, the prior precision scale of the mean.")
    aw = param.Number(None, bounds=(0.0, None), inclusive_bounds=(False, True), allow_None=True,
                      doc="BGe: a_w, the Wishart degrees of freedom (default n + a_μ + 1; must exceed n + 1).")

    @classmethod
    def _resolve_params(cls, params):
        """n_nodes defaults to the number of columns of ``data`` (2 to 12) when data is given without it."""
        shape = array_shape(params.get("data"))
        if "n_nodes" not in params and len(shape) == 2 and 2 <= shape[1] <= 12:
            params["n_nodes"] = shape[1]
        return params

    @classmethod
    def estimate_size(cls, params):
        """d = n(n − 1); the n × 2^n local-score table, the N × n scored data (and the stored data
        parameter), the edge pairs, the mask weights and the true adjacency."""
        p = cls._estimate_params(params)
        n, shape = p["n_nodes"], array_shape(p["data"])
        if p["data"] is not None and len(shape) != 2:
            raise ValueError(f"data must be a 2-D array (N samples × n variables); got shape {shape}")
        n_samples = shape[0] if p["data"] is not None else p["n_samples"]
        pairs = n * (n - 1)
        held = 8 * (n * 2**n + n_samples * n + 2 * pairs + pairs * n) + n * n
        return TargetSize(pairs, held + stored_bytes(p["data"]))

    # -- structure -------------------------------------------------------------------------------
    def _build(self):
        n = self.n_nodes
        self.edge_pairs = np.array([(i, j) for i in range(n) for j in range(n) if i != j], dtype=np.int64)
        self._mask_weights = np.zeros((len(self.edge_pairs), n), dtype=np.int64)
        self._mask_weights[np.arange(len(self.edge_pairs)), self.edge_pairs[:, 1]] = 1 << self.edge_pairs[:, 0]
        data = self._load_data()
        if self.score == "bge":
            aw = self.aw if self.aw is not None else n + self.am + 1
            if aw <= n + 1:
                raise ValueError(f"aw must exceed n_nodes + 1 = {n + 1} (so that T₀ = t·I has t > 0); got {aw}")
            scores = bge_local_scores(data, self.am, aw)
        else:
            scores = bdeu_local_scores(data, self.equivalent_sample_size)
        sizes = np.bitwise_count(np.arange(2**n))
        if self.graph_prior == "sparse":
            scores = scores - self.sparsity * sizes
        if self.max_parents is not None:
            scores[:, sizes > self.max_parents] = -np.inf
        self.local_scores = scores
        self.data_matrix = data

    def _load_data(self) -> np.ndarray:
        """Validated user data, or the synthetic data; sets ``true_adjacency`` and ``node_names``."""
        n = self.n_nodes
        if self.data is not None:
            data = _as_data(self.data, self.score)
            if data.shape[1] != n:
                raise ValueError(f"data has {data.shape[1]} columns but n_nodes = {n}; they must match")
            self.true_adjacency = None
            columns = getattr(self.data, "columns", None)
            self.node_names = [str(c) for c in columns] if columns is not None else [f"X{j}" for j in range(n)]
            return data
        rng = np.random.default_rng(self.seed)
        self.true_adjacency = er_dag(n, self.expected_degree, rng)
        self.node_names = [f"X{j}" for j in range(n)]
        data = linear_gaussian_data(self.true_adjacency, self.n_samples, rng)
        return data if self.score == "bge" else binarise_at_median(data)

    @property
    def dim(self) -> int:
        return self.n_nodes * (self.n_nodes - 1)

    @property
    def image_shape(self) -> tuple[int, int]:
        """A DAG is drawn as its n × n adjacency matrix (parents in rows, children in columns)."""
        return self.n_nodes, self.n_nodes

    @property
    def image_positions(self) -> np.ndarray:
        """Edge i → j, bit k of the state, sits in row i, column j; the diagonal stays empty."""
        return self.edge_pairs[:, 0] * self.n_nodes + self.edge_pairs[:, 1]

    @property
    def image_axes(self) -> ImageAxes:
        names = tuple(self.node_names)
        return ImageAxes(names, names, rows_title="parent", columns_title="child")

    def random_states(self, n: int, rng: np.random.Generator) -> np.ndarray:
        """``n`` random DAGs: a uniform node order each, every order-consistent edge present with
        probability ½, and at most ``max_parents`` parents per node (a random subset kept)."""
        keys = rng.random((n, self.n_nodes))
        adjacency = (keys[:, :, None] < keys[:, None, :]) & (rng.random((n, self.n_nodes, self.n_nodes)) < 0.5)
        if self.max_parents is not None:
            priority = np.where(adjacency, rng.random(adjacency.shape), np.inf)
            rank = np.argsort(np.argsort(priority, axis=1), axis=1)  # rank of each parent within its column
            adjacency &= rank < self.max_parents
        return self.states_from_adjacency(adjacency.astype(np.uint8))

    # -- graphs ------------------------------------------------------------------------------
    def adjacency(self, states) -> np.ndarray:
        """The ``(batch, n, n)`` uint8 adjacency matrices (A[i, j] = 1 for i → j) of a batch of states."""
        x = self.check_states(states)
        matrices = np.zeros((x.shape[0], self.n_nodes, self.n_nodes), dtype=np.uint8)
        matrices[:, self.edge_pairs[:, 0], self.edge_pairs[:, 1]] = x
        return matrices

    def states_from_adjacency(self, adjacency) -> np.ndarray:
        """The ``(batch, n(n−1))`` states of one ``(n, n)`` adjacency matrix or a ``(batch, n, n)`` stack."""
        n = self.n_nodes
        matrices = np.asarray(adjacency)
        if matrices.ndim == 2:
            matrices = matrices[None]
        if matrices.ndim != 3 or matrices.shape[1:] != (n, n):
            raise ValueError(f"adjacency must have shape ({n}, {n}) or (batch, {n}, {n}); got {np.shape(adjacency)}")
        if not np.all((matrices == 0) | (matrices == 1)):
            raise ValueError("adjacency matrices must contain only 0 and 1")
        if np.any(np.diagonal(matrices, axis1=1, axis2=2)):
            raise ValueError("adjacency matrices must have a zero diagonal (self-loops cannot be encoded)")
        return matrices[:, self.edge_pairs[:, 0], self.edge_pairs[:, 1]].astype(np.uint8)

    def parent_masks(self, states) -> np.ndarray:
        """``(batch, n)`` int64: mask_j = Σ_{i ∈ pa(j)} 2^i."""
        return self._parent_masks(self.check_states(states))

    def _parent_masks(self, x: np.ndarray) -> np.ndarray:
        return x.astype(np.int64) @ self._mask_weights

    def is_acyclic(self, states) -> np.ndarray:
        """``(batch,)`` bool: whether each state's graph is a DAG."""
        return acyclic_from_masks(self.parent_masks(states))

    def edge_probabilities(self, states, weights=None) -> np.ndarray:
        """Weighted average adjacency ``(n, n)``: P(i → j) under weights ∝ ``weights`` (default: equal).

        With ``enumerate_dags()`` and weights exp(log_p − max log_p) these are the
        exact posterior edge probabilities; with MCMC samples and no weights, their estimates.
        """
        matrices = self.adjacency(states).astype(np.float64)
        w = np.ones(len(matrices)) if weights is None else np.asarray(weights, dtype=np.float64)
        if w.shape != (len(matrices),):
            raise ValueError(f"weights must have shape ({len(matrices)},); got {w.shape}")
        if not (np.all(np.isfinite(w)) and np.all(w >= 0) and w.sum() > 0):
            raise ValueError("weights must be finite, non-negative and not all zero")
        return np.tensordot(w, matrices, axes=1) / w.sum()

    # -- the contract --------------------------------------------------------------------------
    def _score_and_acyclic(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Σ_j local_scores[j, mask_j] (ignoring cycles) and acyclicity, per row."""
        masks = self._parent_masks(x)
        scores = self.local_scores[np.arange(self.n_nodes), masks].sum(axis=1)
        return scores, acyclic_from_masks(masks)

    def _log_prob(self, x):
        scores, acyclic = self._score_and_acyclic(x)
        return np.where(acyclic, scores, -np.inf)

    def _all_graphs(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """All 2^dim states (base-class order), their summed local scores and acyclicity."""
        if self.n_nodes > MAX_ENUMERATE_NODES:
            raise ValueError(f"enumeration lists all 2^(n(n−1)) graphs and needs n_nodes ≤ {MAX_ENUMERATE_NODES}; "
                             f"got {self.n_nodes}")
        states = all_states(self.dim)
        parts = [self._score_and_acyclic(chunk) for chunk in np.array_split(states, max(1, len(states) // CHUNK))]
        return states, np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts])

    def enumerate(self):
        """All 2^{n(n−1)} states and log p̃ (−∞ on cyclic graphs), uncounted. Needs n ≤ 5."""
        states, scores, acyclic = self._all_graphs()
        return states, np.where(acyclic, scores, -np.inf)

    def enumerate_dags(self):
        """Only the acyclic states and their log p̃ (−∞ where ``max_parents`` is exceeded), uncounted. n ≤ 5."""
        states, scores, acyclic = self._all_graphs()
        return states[acyclic], scores[acyclic]
