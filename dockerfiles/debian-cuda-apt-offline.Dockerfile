# forge CUDA toolchain image restored offline: Debian @SUITE@ with gcc @GCC@ and python @PYTHON@ and the
# CUDA toolkit of debian-cuda-apt.Dockerfile, built with no network from the exact .debs (the
# @APT_COMPONENTS@ ones among them) and wheels of its lock, kept in forge's package cache.
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
# As in debian-cuda-apt.Dockerfile: nvcc with the cell's g++, the static runtime and cuobjdump.
RUN set -e; @NVCC@ --version; @CUOBJDUMP@ --version; \
    test -f "/usr/lib/$(gcc-@GCC@ -print-multiarch)/libcudart_static.a"; \
    echo 'int main() { return 0; }' > /tmp/forge-probe.cu; \
    @NVCC@ -ccbin g++-@GCC@ -o /tmp/forge-probe /tmp/forge-probe.cu; /tmp/forge-probe; rm -f /tmp/forge-probe*
RUN useradd --create-home --uid @UID@ --user-group forge \
 && useradd --create-home --uid @UID_B@ --gid forge forge-b \
 && mkdir -p /src /build /stage /verify-build /ccache \
 && chown forge:forge /build /stage /verify-build /ccache \
 && chmod 2775 /build /stage /verify-build
ENV PATH=/opt/forge-venv/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    CC=gcc-@GCC@ CXX=g++-@GCC@ CCACHE_DIR=/ccache \
    CUDACXX=@NVCC@ CUDAHOSTCXX=g++-@GCC@
USER forge
WORKDIR /build
