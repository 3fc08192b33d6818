"""Fit a labelled model written with xarray, by gradient descent through xarray's own code.

A seasonal temperature model per station, linear in its parameters: ``mean +
a * cos(2 pi day / 365) + b * sin(2 pi day / 365)``. The data has gaps (NaN), so the loss uses xarray's default
NaN-skipping mean (``np.nanmean`` through the NumPy protocol, recorded by
StrideWeave; the gaps get a zero gradient). The parameters are Float32 Tensors wrapped in DataArrays;
broadcasting by dimension name, ``.sel``, ``.groupby`` and ``xr.dot`` all
differentiate. Runs on NumPy; ``python xarray_regression.py torch`` (or
``jax``, ``array_api_strict``) runs the same code on that carrier.
"""

import sys

import numpy as np
import xarray as xr

import strideweave as sw
import strideweave.array_api as xp

carrier = sys.argv[1] if len(sys.argv) > 1 else "numpy"
rng = np.random.default_rng(0)
stations = ["north", "coast", "valley"]
days = np.arange(0, 365, 5.0)

# Synthetic observations with gaps: what a user loads from a file.
truth = {"mean": np.array([8.0, 12.0, 15.0]), "amplitude": np.array([9.0, 5.0, 11.0]),
         "phase": np.array([200.0, 215.0, 195.0])}
clean = truth["mean"] + truth["amplitude"] * np.cos(2 * np.pi * (days[:, None] - truth["phase"]) / 365)
observed = (clean + rng.normal(0, 0.8, clean.shape)).astype(np.float32)
observed[rng.uniform(size=observed.shape) < 0.1] = np.nan

obs = xr.DataArray(xp.asarray(observed, device=carrier), dims=("day", "station"),
                   coords={"day": days, "station": stations})

# Parameters: one per station, labelled by station (Float32 leaves, differentiable).
params = {name: xp.zeros(3, device=carrier) for name in ("mean", "a", "b")}
angle = xr.DataArray(xp.asarray((2 * np.pi * days / 365).astype(np.float32), device=carrier), dims="day")


def loss_of(params):
    p = {k: xr.DataArray(v, dims="station", coords={"station": stations}) for k, v in params.items()}
    # np.cos on a DataArray: xarray applies it to the Tensor, which runs StrideWeave's recorded cos
    model = p["mean"] + p["a"] * np.cos(angle) + p["b"] * np.sin(angle)
    # Fill the gaps before the arithmetic and mask them after it: a NaN that reaches the squaring would
    # make its gradient 0 * NaN = NaN, in torch as here. The mean skips the masked gaps (np.nanmean).
    squared = (model - obs.fillna(0.0)) ** 2
    return squared.where(obs.notnull(), np.nan).mean()


for step in range(301):
    loss = loss_of(params)
    loss.data.backward()
    with sw.no_grad():
        for value in params.values():
            value -= 0.4 * value.grad
            value.grad = None
    if step % 100 == 0:
        print(f"step {step:3d}  loss {float(loss.data):8.3f}")

fitted = xr.Dataset({k: ("station", v.numpy()) for k, v in params.items()}, coords={"station": stations})
fitted["amplitude"] = np.hypot(fitted.a, fitted.b)
fitted["phase"] = np.degrees(np.arctan2(fitted.b, fitted.a)) % 360 * 365 / 360
print(fitted[["mean", "amplitude", "phase"]].round(1).to_dataframe())
assert float(loss.data) < 1.0, "the fit did not converge"

# The same gradient through other xarray operations: per-season means, a dot product over stations.
season = xr.DataArray(np.where((days > 80) & (days < 265), "summer", "winter"), dims="day", coords={"day": days})
shift = xp.asarray(np.float32(0.5), device=carrier)
shifted = (obs + shift).assign_coords(season=season)
by_season = shifted.groupby("season").mean()
weights = xr.DataArray(xp.asarray(np.array([0.2, 0.3, 0.5], dtype=np.float32), device=carrier), dims="station")
score = xr.dot(by_season, weights, dim="station").sum()
score.data.backward()
print("d score / d shift =", float(shift.grad))  # the weights sum to 1 per season: 2 seasons -> 2.0
