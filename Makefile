# The README's commands. Each creates .venv on first use; nothing is installed by hand.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
JOBS ?= 2

.PHONY: demo test test-fast lint format docs bench compat mindcv-census mindcv-compare regenerate clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e ".[dev]"
	touch $(STAMP)

PRETRAINED := examples/pretrained/resnet18_10classes.ckpt

# the fine-tuning example's starting weights (git-ignored): every example runs as shipped
$(PRETRAINED): $(STAMP) examples/make_pretrained.py
	$(BIN)/python examples/make_pretrained.py $@

## demo: generate the lenet_digits example and train it (LeNet-5 on sklearn's 8x8 digits, CPU)
demo: $(STAMP) $(PRETRAINED)
	$(BIN)/mscodegen new examples/lenet_digits.yaml --out runs/demo --force
	cd runs/demo && ../../$(BIN)/python train_model.py --output-dir outputs

## test: lint (ruff, mypy strict), docs (strict build), then the whole suite (unit, golden, parity, end to end) on $(JOBS) workers
test: $(STAMP) $(PRETRAINED) lint docs
	$(BIN)/pytest -n $(JOBS) --dist worksteal --durations=15

## test-fast: lint, then every test that runs no MindSpore (about a minute on 2 cores)
test-fast: $(STAMP) lint
	$(BIN)/pytest -n $(JOBS) -m "not slow"

## lint: ruff (check, format --check) and mypy strict; changes nothing
lint: $(STAMP)
	$(BIN)/ruff check mscodegen tests bench generated docs/cookbook
	$(BIN)/ruff format --check mscodegen tests bench docs/cookbook/*.py
	$(BIN)/mypy

## format: fix in place what ruff can (check --fix, then format: a fix may need re-wrapping), on lint's paths
## but generated/, which `make regenerate` writes
format: $(STAMP)
	$(BIN)/ruff check --fix mscodegen tests bench docs/cookbook
	$(BIN)/ruff format mscodegen tests bench docs/cookbook/*.py

## docs: build the site (mkdocs.yml, docs/) into site/; --strict fails on a broken link or a missing file
docs: $(STAMP)
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --quiet

## bench: speed of the generated scripts vs a hand-written floor (not part of `make test`)
bench: $(STAMP)
	$(BIN)/python -m bench

## compat: the version matrix: parity on every MindSpore release PyPI has for this Python (about 25 min; before
## each release, not in CI), rewrites docs/compat.md. A subset is printed only:
##   make compat VERSIONS="2.7.0 2.8.0" EXAMPLES="quickstart resume"    (COMPAT_ARGS: more driver options)
compat: $(STAMP)
	$(BIN)/python -m mscodegen.tools.compat $(if $(VERSIONS)$(EXAMPLES),,--page docs/compat.md) \
		$(if $(VERSIONS),--versions $(VERSIONS)) $(if $(EXAMPLES),--examples $(EXAMPLES)) $(COMPAT_ARGS)

## mindcv-census: import-mindcv every recipe of a mindcv checkout (or a folder of recipes), validate what it writes,
## print exact / approximated / not converted / refused counts and per-argument tallies (docs/from-mindcv.md):
##   make mindcv-census MINDCV=~/src/mindcv    (MINDCV_DEVICES: --devices for distribute recipes, default 1;
##   MINDCV_ARGS=--each: then every recipe's result)
mindcv-census: $(STAMP)
	@test -n "$(MINDCV)" || { echo "usage: make mindcv-census MINDCV=<mindcv checkout or configs folder>"; exit 2; }
	$(BIN)/python -m mscodegen.tools.mindcv_census "$(MINDCV)" --devices $(or $(MINDCV_DEVICES),1) $(MINDCV_ARGS)

## mindcv-compare: mindcv's own train.py against the generated scripts of one recipe, 20 steps on CPU, per-step
## losses as float32 bits (docs/from-mindcv.md has each recipe's run time, 2 cores):
##   make mindcv-compare MINDCV=~/src/mindcv    (MINDCV_RECIPE: default configs/resnet/resnet_18_ascend.yaml;
##   MINDCV_COMPARE_ARGS: more options, e.g. "--image-resize 224" for convit, "--steps 10")
mindcv-compare: $(STAMP)
	@test -n "$(MINDCV)" || { echo "usage: make mindcv-compare MINDCV=<mindcv checkout>"; exit 2; }
	$(BIN)/python -m mscodegen.tools.mindcv_compare "$(MINDCV)" $(if $(MINDCV_RECIPE),--recipe $(MINDCV_RECIPE)) $(MINDCV_COMPARE_ARGS)

## regenerate: rewrite generated/ from examples/ after a template or schema change
regenerate: $(STAMP)
	for f in examples/*.yaml; do $(BIN)/mscodegen new $$f --force || exit 1; done

clean:
	rm -rf $(VENV) runs site .pytest_cache
