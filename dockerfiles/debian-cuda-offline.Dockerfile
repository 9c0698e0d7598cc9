# forge CUDA toolchain image restored offline (debian-offline.Dockerfile plus the CUDA layer of
# debian-cuda.Dockerfile; the CUDA wheels are among the lock's wheels).
# forge toolchain image restored offline: Debian @SUITE@ with gcc @GCC@ and python @PYTHON@, built with no
# network from the exact .debs and wheels of its lock, kept in forge's package cache (forge/pkgcache.py).
# Rendered by forge/images.py (build_from_cache); the image's lock is then checked like any other.
FROM @BASE@
ENV DEBIAN_FRONTEND=noninteractive LANG=C.UTF-8
COPY ca/ /usr/local/share/ca-certificates/forge/
# Every package of the lock as a local file: apt resolves among them (those the base already holds
# at that version stay as they are); no package list, no mirror.
COPY debs/ /tmp/forge-debs/
RUN apt-get install -y --no-install-recommends /tmp/forge-debs/*.deb \
 && apt-mark manual @APT_PACKAGES@ >/dev/null \
 && rm -rf /tmp/forge-debs /var/lib/apt/lists/* \
 && update-ca-certificates
COPY wheels/ /tmp/forge-wheels/
COPY requirements.txt /opt/forge-requirements.txt
RUN python3 -m venv /opt/forge-venv \
 && export PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1 \
 && (cd /tmp/forge-wheels && sha256sum -- *.whl) > /opt/forge-venv/forge-wheels.sha256 \
 && /opt/forge-venv/bin/python -m pip install --no-index --no-deps @PIP_HASH_FLAGS@ \
      --find-links /tmp/forge-wheels -r /opt/forge-requirements.txt \
 && rm -rf /tmp/forge-wheels
# The CUDA toolkit of the cell, from the exactly pinned wheels of toolchains/cuda/wheels.yaml installed
# above, linked at /opt/cuda in the layout nvcc.profile and CMake's FindCUDAToolkit expect: lib64
# (nvcc links with -L$TOP/lib64) and an unversioned libcudart.so. nvcc compiles host code with the
# cell's g++ (CUDAHOSTCXX), so its host_config.h limits apply to the cell's gcc.
RUN set -e; set -- /opt/forge-venv/lib/python3*/site-packages/nvidia/cu*; \
    if [ "$#" -ne 1 ] || [ ! -x "$1/bin/nvcc" ]; then echo "expected one CUDA toolkit with nvcc, found: $*" >&2; exit 1; fi; \
    ln -s lib "$1/lib64"; \
    ln -s "$(cd "$1/lib" && ls libcudart.so.* | head -n 1)" "$1/lib/libcudart.so"; \
    ln -s "$1" /opt/cuda; \
    /opt/cuda/bin/nvcc --version; /opt/cuda/bin/cuobjdump --version
RUN useradd --create-home --uid @UID@ --user-group forge \
 && useradd --create-home --uid @UID_B@ --gid forge forge-b \
 && mkdir -p /src /build /stage /verify-build /ccache \
 && chown forge:forge /build /stage /verify-build /ccache \
 && chmod 2775 /build /stage /verify-build
ENV PATH=/opt/cuda/bin:/opt/forge-venv/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    CC=gcc-@GCC@ CXX=g++-@GCC@ CCACHE_DIR=/ccache \
    CUDACXX=/opt/cuda/bin/nvcc CUDAHOSTCXX=g++-@GCC@ CUDAToolkit_ROOT=/opt/cuda
USER forge
WORKDIR /build
