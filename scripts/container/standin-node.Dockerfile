# Stand-in for node:24-bookworm-slim, for the container test on machines that reach no container
# registry: Debian bookworm (debootstrap --variant=minbase, imported as svc-auth-standin/debian),
# the Node.js 24 binary the project's lockfile pins, npm, and a user node of uid 1000 as in the
# official image. It tests the Dockerfile and the image, not the official base image.
FROM svc-auth-standin/debian:bookworm
RUN groupadd --gid 1000 node && useradd --uid 1000 --gid node --shell /bin/bash --create-home node
COPY node /usr/local/bin/node
COPY npm /usr/local/lib/node_modules/npm
RUN ln -s ../lib/node_modules/npm/bin/npm-cli.js /usr/local/bin/npm \
 && ln -s ../lib/node_modules/npm/bin/npx-cli.js /usr/local/bin/npx \
 && node --version && npm --version
CMD ["node"]
