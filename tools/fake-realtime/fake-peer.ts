/**
 * WebRTC peers in pure TypeScript (werift) for the realtime fakes: the provider's side that
 * answers an offer and sends audio back, and a stand-in browser that makes an offer (microphone
 * track + data channel) for API specs and benchmarks.
 *
 * Both gather and accept loopback candidates only and use no STUN/TURN server, so no packet
 * leaves the machine (werift's default config asks a public STUN server; it is replaced here).
 */
import {
  MediaStreamTrack,
  RTCPeerConnection,
  RtpHeader,
  RtpPacket,
  type RTCPeerConnectionConfig,
} from 'werift';

/** Opus's shortest valid frame: 20 ms of silence. */
const OPUS_SILENCE = Buffer.from([0xf8, 0xff, 0xfe]);
const FRAME_MS = 20;
const GATHER_TIMEOUT_MS = 5_000;

const LOOPBACK_ONLY: RTCPeerConnectionConfig = {
  iceServers: [],
  iceUseIpv6: false,
  iceInterfaceAddresses: { udp4: '127.0.0.1' },
  iceAdditionalHostAddresses: ['127.0.0.1'],
  iceFilterCandidatePair: (pair) => pair.remoteCandidate.host === '127.0.0.1',
  bundlePolicy: 'max-bundle',
};

export interface FakePeer {
  answer: string;
  /** RTP packets of audio sent to the caller so far. */
  readonly audioPacketsSent: number;
  /** RTP packets of audio received from the caller so far. */
  readonly audioPacketsReceived: number;
  close(): void;
}

/** The provider's side: answers `offer`, and once connected sends 20 ms Opus frames back. */
export async function answerWithPeer(offer: string): Promise<FakePeer> {
  const pc = new RTCPeerConnection(LOOPBACK_ONLY);
  let sent = 0;
  let received = 0;
  const track = new MediaStreamTrack({ kind: 'audio' });
  pc.onTrack.subscribe((remote) => {
    remote.onReceiveRtp.subscribe(() => {
      received++;
    });
  });
  await pc.setRemoteDescription({ type: 'offer', sdp: offer });
  const audio = pc.getTransceivers().find((t) => t.kind === 'audio');
  if (audio) {
    audio.setDirection('sendrecv');
    await audio.sender.replaceTrack(track);
  }
  await pc.setLocalDescription(await pc.createAnswer());
  await gathered(pc);
  let sequenceNumber = 0;
  let timestamp = 0;
  const timer = setInterval(() => {
    if (pc.connectionState !== 'connected') return;
    track.writeRtp(
      new RtpPacket(
        new RtpHeader({
          payloadType: 111,
          sequenceNumber: (sequenceNumber = (sequenceNumber + 1) & 0xffff),
          timestamp: (timestamp = (timestamp + 960) >>> 0),
          marker: false,
        }),
        OPUS_SILENCE,
      ),
    );
    sent++;
  }, FRAME_MS);
  return {
    answer: loopbackOnly(pc.localDescription?.sdp ?? ''),
    get audioPacketsSent() {
      return sent;
    },
    get audioPacketsReceived() {
      return received;
    },
    close() {
      clearInterval(timer);
      void pc.close();
    },
  };
}

export interface FakeCaller {
  offer: string;
  /** Applies the answer; resolves once the peers are connected. */
  connect(answer: string, timeoutMs?: number): Promise<void>;
  /** RTP packets of audio that arrived from the provider. */
  readonly audioPacketsReceived: number;
  close(): void;
}

/** A stand-in browser: a microphone track that sends silence, and the `oai-events` data channel. */
export async function makeCaller(): Promise<FakeCaller> {
  const pc = new RTCPeerConnection(LOOPBACK_ONLY);
  const mic = new MediaStreamTrack({ kind: 'audio' });
  pc.addTransceiver(mic, { direction: 'sendrecv' });
  pc.createDataChannel('oai-events');
  let received = 0;
  pc.onTrack.subscribe((remote) => {
    remote.onReceiveRtp.subscribe(() => {
      received++;
    });
  });
  await pc.setLocalDescription(await pc.createOffer());
  await gathered(pc);
  return {
    offer: loopbackOnly(pc.localDescription?.sdp ?? ''),
    async connect(answer, timeoutMs = 10_000) {
      await pc.setRemoteDescription({ type: 'answer', sdp: answer });
      if (pc.connectionState === 'connected') return;
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new Error(`Not connected: ${pc.connectionState}`)),
          timeoutMs,
        );
        const { unSubscribe } = pc.connectionStateChange.subscribe((state) => {
          if (state === 'connected') {
            clearTimeout(timer);
            unSubscribe();
            resolve();
          } else if (state === 'failed' || state === 'closed') {
            clearTimeout(timer);
            unSubscribe();
            reject(new Error(`Connection ${state}`));
          }
        });
      });
    },
    get audioPacketsReceived() {
      return received;
    },
    close() {
      void pc.close();
    },
  };
}

/** Drops every candidate that is not on 127.0.0.1, so the other side never tries another address. */
function loopbackOnly(sdp: string): string {
  return sdp
    .split('\r\n')
    .filter(
      (line) =>
        !line.startsWith('a=candidate:') || / 127\.0\.0\.1 \d+ typ /.test(line),
    )
    .join('\r\n');
}

async function gathered(pc: RTCPeerConnection): Promise<void> {
  if (pc.iceGatheringState === 'complete') return;
  await new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, GATHER_TIMEOUT_MS);
    const { unSubscribe } = pc.iceGatheringStateChange.subscribe((state) => {
      if (state === 'complete') {
        clearTimeout(timer);
        unSubscribe();
        resolve();
      }
    });
  });
}
