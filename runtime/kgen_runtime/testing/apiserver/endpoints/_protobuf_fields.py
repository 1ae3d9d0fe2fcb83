"""Protobuf field numbers of the built-in kinds, and which Go fields are pointers.

Facts of Kubernetes' Go types: each field's ``protobuf:"<wire>,<number>,..."`` struct tag (the
numbers ``generated.proto`` carries) and its Go type and ``json`` tag, read from the
``types.go`` files of k8s.io/apimachinery ``pkg/apis/meta/v1``, k8s.io/api
``<group>/<version>`` and kube-aggregator (kubernetes/kubernetes ``staging/src``, in the
versions at hand, v1.31 to v1.37-dev); fields of the v1.36 OpenAPI those versions lacked were
taken from the struct tags of later copies of the same types, or from the ``generated.proto``
descriptors compiled into kubectl v1.32 (gogo-protobuf embeds them gzipped in every binary
linking k8s.io/api; tests/testing/test_protobuf.py checks the whole table against them). Field
numbers never change once released, so an older file is right for the fields it has. The
field *types* are not repeated here: they come from the bundled OpenAPI documents
(:mod:`kgen_runtime.testing.apiserver.openapi._openapi`), whose property names are the proto
field names (go-to-protobuf names every field after its JSON name).

One line per message (its OpenAPI schema name, without the package prefix of its block),
then ``field=number`` for every field, with a suffix where the Go type says how the field is
written and read:

* no suffix: a Go value field with ``omitempty``: Go's marshaller always writes it (an empty
  string, a zero, an empty message), and JSON leaves a zero scalar out;
* ``*``: a pointer (``*int32``, ``*bool``, ``*PodSecurityContext``...): written only when set,
  and a zero that was set is kept;
* ``!``: a Go value field without ``omitempty``: its zero is kept in JSON;
* ``?`` instead of a number: a field the v1.36 OpenAPI has but whose number was not in the
  sources read (mostly alpha and status fields the test server never sets); such a field is
  skipped when decoding, and an object that sets one is answered in JSON.

``@Name=number`` is a Go struct embedded with ``json:",inline"`` (``Volume``'s
``VolumeSource``): one nested message on the wire, its fields flattened in JSON; ``Name`` is
the line numbering its fields.

Slices and maps need no suffix: Go writes their elements, nothing for an empty one.
"""

from __future__ import annotations

__all__ = ["FIELDS"]

_BLOCKS: dict[str, str] = {
    # k8s.io/apimachinery/pkg/apis/meta/v1/types.go (DeleteOptions.ignoreStoreReadError...:
    # kubectl v1.32's compiled descriptors)
    "io.k8s.apimachinery.pkg.apis.meta.v1.": """
ListMeta selfLink=1 resourceVersion=2 continue=3 remainingItemCount=4* shardInfo=?
ObjectMeta name=1 generateName=2 namespace=3 selfLink=4 uid=5 resourceVersion=6 generation=7
  creationTimestamp=8 deletionTimestamp=9* deletionGracePeriodSeconds=10* labels=11
  annotations=12 ownerReferences=13 finalizers=14 managedFields=17
OwnerReference kind=1! name=3! uid=4! apiVersion=5! controller=6* blockOwnerDeletion=7*
DeleteOptions gracePeriodSeconds=1* preconditions=2* orphanDependents=3* propagationPolicy=4*
  dryRun=5 ignoreStoreReadErrorWithClusterBreakingPotential=6*
Preconditions uid=1* resourceVersion=2*
Status metadata=1 status=2 message=3 reason=4 details=5* code=6
StatusDetails name=1 group=2 kind=3 causes=4 retryAfterSeconds=5 uid=6
StatusCause reason=1 message=2 field=3
LabelSelector matchLabels=1 matchExpressions=2
LabelSelectorRequirement key=1! operator=2! values=3
FieldSelectorRequirement key=1! operator=2! values=3
ManagedFieldsEntry manager=1 operation=2 apiVersion=3 time=4* fieldsType=6 fieldsV1=7*
  subresource=8
PartialObjectMetadata metadata=1
PartialObjectMetadataList metadata=1 items=2
Condition type=1! status=2! observedGeneration=3 lastTransitionTime=4! reason=5! message=6!
""",
    # k8s.io/api/core/v1/types.go; from kubectl v1.32's compiled descriptors: VolumeSource.image,
    # VolumeMount.recursiveReadOnly, ContainerStatus' volumeMounts/user/allocatedResourcesStatus,
    # ServiceSpec.trafficDistribution, NodeStatus' runtimeHandlers/features and the messages
    # they name (pointer-ness and omitempty: the Go types of core/v1 types.go)
    "io.k8s.api.core.v1.": """
ConfigMap metadata=1 data=2 binaryData=3 immutable=4*
ConfigMapList metadata=1 items=2
Volume name=1! @VolumeSource=2
VolumeSource hostPath=1* emptyDir=2* gcePersistentDisk=3* awsElasticBlockStore=4* gitRepo=5*
  secret=6* nfs=7* iscsi=8* glusterfs=9* persistentVolumeClaim=10* rbd=11* flexVolume=12*
  cinder=13* cephfs=14* flocker=15* downwardAPI=16* fc=17* azureFile=18* configMap=19*
  vsphereVolume=20* quobyte=21* azureDisk=22* photonPersistentDisk=23* portworxVolume=24*
  scaleIO=25* projected=26* storageos=27* csi=28* ephemeral=29*
  image=30*
PersistentVolumeClaimVolumeSource claimName=1! readOnly=2
PersistentVolumeSource gcePersistentDisk=1* awsElasticBlockStore=2* hostPath=3* glusterfs=4*
  nfs=5* rbd=6* iscsi=7* cinder=8* cephfs=9* fc=10* flocker=11* flexVolume=12* azureFile=13*
  vsphereVolume=14* quobyte=15* azureDisk=16* photonPersistentDisk=17* portworxVolume=18*
  scaleIO=19* local=20* storageos=21* csi=22*
PersistentVolume metadata=1 spec=2 status=3
PersistentVolumeSpec capacity=1 @PersistentVolumeSource=2 accessModes=3 claimRef=4*
  persistentVolumeReclaimPolicy=5 storageClassName=6 mountOptions=7 volumeMode=8*
  nodeAffinity=9* volumeAttributesClassName=10*
VolumeNodeAffinity required=1*
PersistentVolumeStatus phase=1 message=2 reason=3 lastPhaseTransitionTime=4*
PersistentVolumeList metadata=1 items=2
PersistentVolumeClaim metadata=1 spec=2 status=3
PersistentVolumeClaimList metadata=1 items=2
PersistentVolumeClaimSpec accessModes=1 resources=2 volumeName=3 selector=4* storageClassName=5*
  volumeMode=6* dataSource=7* dataSourceRef=8* volumeAttributesClassName=9*
TypedObjectReference apiGroup=1* kind=2! name=3! namespace=4*
ModifyVolumeStatus targetVolumeAttributesClassName=1 status=2!
PersistentVolumeClaimCondition type=1! status=2! lastProbeTime=3 lastTransitionTime=4 reason=5
  message=6
PersistentVolumeClaimStatus phase=1 accessModes=2 capacity=3 conditions=4 allocatedResources=5
  allocatedResourceStatuses=7 currentVolumeAttributesClassName=8* modifyVolumeStatus=9*
HostPathVolumeSource path=1! type=2*
EmptyDirVolumeSource medium=1 sizeLimit=2*
GlusterfsVolumeSource endpoints=1! path=2! readOnly=3
GlusterfsPersistentVolumeSource endpoints=1! path=2! readOnly=3 endpointsNamespace=4*
RBDVolumeSource monitors=1 image=2! fsType=3 pool=4 user=5 keyring=6 secretRef=7* readOnly=8
RBDPersistentVolumeSource monitors=1 image=2! fsType=3 pool=4 user=5 keyring=6 secretRef=7*
  readOnly=8
CinderVolumeSource volumeID=1! fsType=2 readOnly=3 secretRef=4*
CinderPersistentVolumeSource volumeID=1! fsType=2 readOnly=3 secretRef=4*
CephFSVolumeSource monitors=1 path=2 user=3 secretFile=4 secretRef=5* readOnly=6
SecretReference name=1 namespace=2
CephFSPersistentVolumeSource monitors=1 path=2 user=3 secretFile=4 secretRef=5* readOnly=6
FlockerVolumeSource datasetName=1 datasetUUID=2
GCEPersistentDiskVolumeSource pdName=1! fsType=2 partition=3 readOnly=4
QuobyteVolumeSource registry=1! volume=2! readOnly=3 user=4 group=5 tenant=6
FlexPersistentVolumeSource driver=1! fsType=2 secretRef=3* readOnly=4 options=5
FlexVolumeSource driver=1! fsType=2 secretRef=3* readOnly=4 options=5
AWSElasticBlockStoreVolumeSource volumeID=1! fsType=2 partition=3 readOnly=4
GitRepoVolumeSource repository=1! revision=2 directory=3
SecretVolumeSource secretName=1 items=2 defaultMode=3* optional=4*
SecretProjection @LocalObjectReference=1 items=2 optional=4*
NFSVolumeSource server=1! path=2! readOnly=3
ISCSIVolumeSource targetPortal=1! iqn=2! lun=3! iscsiInterface=4 fsType=5 readOnly=6 portals=7
  chapAuthDiscovery=8 secretRef=10* chapAuthSession=11 initiatorName=12*
ISCSIPersistentVolumeSource targetPortal=1! iqn=2! lun=3! iscsiInterface=4 fsType=5 readOnly=6
  portals=7 chapAuthDiscovery=8 secretRef=10* chapAuthSession=11 initiatorName=12*
FCVolumeSource targetWWNs=1 lun=2* fsType=3 readOnly=4 wwids=5
AzureFileVolumeSource secretName=1! shareName=2! readOnly=3
AzureFilePersistentVolumeSource secretName=1! shareName=2! readOnly=3 secretNamespace=4*
VsphereVirtualDiskVolumeSource volumePath=1! fsType=2 storagePolicyName=3 storagePolicyID=4
PhotonPersistentDiskVolumeSource pdID=1! fsType=2
AzureDiskVolumeSource diskName=1! diskURI=2! cachingMode=3* fsType=4* readOnly=5* kind=6*
PortworxVolumeSource volumeID=1! fsType=2 readOnly=3
ScaleIOVolumeSource gateway=1! system=2! secretRef=3* sslEnabled=4 protectionDomain=5
  storagePool=6 storageMode=7 volumeName=8 fsType=9 readOnly=10
ScaleIOPersistentVolumeSource gateway=1! system=2! secretRef=3* sslEnabled=4 protectionDomain=5
  storagePool=6 storageMode=7 volumeName=8 fsType=9 readOnly=10
StorageOSVolumeSource volumeName=1 volumeNamespace=2 fsType=3 readOnly=4 secretRef=5*
StorageOSPersistentVolumeSource volumeName=1 volumeNamespace=2 fsType=3 readOnly=4 secretRef=5*
ConfigMapVolumeSource @LocalObjectReference=1 items=2 defaultMode=3* optional=4*
ConfigMapProjection @LocalObjectReference=1 items=2 optional=4*
ServiceAccountTokenProjection audience=1 expirationSeconds=2* path=3!
ClusterTrustBundleProjection name=1* signerName=2* labelSelector=3* path=4! optional=5*
ProjectedVolumeSource sources=1 defaultMode=2*
VolumeProjection secret=1* downwardAPI=2* configMap=3* serviceAccountToken=4*
  clusterTrustBundle=5*
  podCertificate=?
KeyToPath key=1! path=2! mode=3*
LocalVolumeSource path=1! fsType=2*
CSIPersistentVolumeSource driver=1! volumeHandle=2! readOnly=3 fsType=4 volumeAttributes=5
  controllerPublishSecretRef=6* nodeStageSecretRef=7* nodePublishSecretRef=8*
  controllerExpandSecretRef=9* nodeExpandSecretRef=10*
CSIVolumeSource driver=1! readOnly=2* fsType=3* volumeAttributes=4 nodePublishSecretRef=5*
EphemeralVolumeSource volumeClaimTemplate=1*
PersistentVolumeClaimTemplate metadata=1 spec=2
ContainerPort name=1 hostPort=2 containerPort=3! protocol=4 hostIP=5
VolumeMount name=1! readOnly=2 mountPath=3! subPath=4 mountPropagation=5* subPathExpr=6
  recursiveReadOnly=7*
VolumeDevice name=1! devicePath=2!
EnvVar name=1! value=2 valueFrom=3*
EnvVarSource fieldRef=1* resourceFieldRef=2* configMapKeyRef=3* secretKeyRef=4*
  fileKeyRef=5*
ObjectFieldSelector apiVersion=1 fieldPath=2!
ResourceFieldSelector containerName=1 resource=2! divisor=3
ConfigMapKeySelector @LocalObjectReference=1 key=2! optional=3*
SecretKeySelector @LocalObjectReference=1 key=2! optional=3*
EnvFromSource prefix=1 configMapRef=2* secretRef=3*
ConfigMapEnvSource @LocalObjectReference=1 optional=2*
SecretEnvSource @LocalObjectReference=1 optional=2*
HTTPHeader name=1! value=2!
HTTPGetAction path=1 port=2 host=3 scheme=4 httpHeaders=5
TCPSocketAction port=1 host=2
GRPCAction port=1! service=2*
ExecAction command=1
SleepAction seconds=1!
Probe @ProbeHandler=1 initialDelaySeconds=2 timeoutSeconds=3 periodSeconds=4 successThreshold=5
  failureThreshold=6 terminationGracePeriodSeconds=7*
ProbeHandler exec=1* httpGet=2* tcpSocket=3* grpc=4*
ContainerResizePolicy resourceName=1! restartPolicy=2!
Capabilities add=1 drop=2
ResourceRequirements limits=1 requests=2 claims=3
VolumeResourceRequirements limits=1 requests=2
ResourceClaim name=1! request=2
Container name=1! image=2 command=3 args=4 workingDir=5 ports=6 env=7 resources=8
  volumeMounts=9 livenessProbe=10* readinessProbe=11* lifecycle=12* terminationMessagePath=13
  imagePullPolicy=14 securityContext=15* stdin=16 stdinOnce=17 tty=18 envFrom=19
  terminationMessagePolicy=20 volumeDevices=21 startupProbe=22* resizePolicy=23
  restartPolicy=24*
  restartPolicyRules=25
LifecycleHandler exec=1* httpGet=2* tcpSocket=3* sleep=4*
Lifecycle postStart=1* preStop=2*
  stopSignal=3*
ContainerStateWaiting reason=1 message=2
ContainerStateRunning startedAt=1
ContainerStateTerminated exitCode=1! signal=2 reason=3 message=4 startedAt=5 finishedAt=6
  containerID=7
ContainerState waiting=1* running=2* terminated=3*
ContainerStatus name=1! state=2 lastState=3 ready=4! restartCount=5! image=6! imageID=7!
  containerID=8 started=9* allocatedResources=10 resources=11*
  allocatedResourcesStatus=14 stopSignal=? user=13* volumeMounts=12
ImageVolumeSource reference=1 pullPolicy=2
VolumeMountStatus name=1! mountPath=2! readOnly=3 recursiveReadOnly=4* volumeStatus=?
ResourceStatus name=1! resources=2
ResourceHealth resourceID=1! health=2 message=?
ContainerUser linux=1*
LinuxContainerUser uid=1! gid=2! supplementalGroups=3
PodCondition type=1! status=2! lastProbeTime=3 lastTransitionTime=4 reason=5 message=6
  observedGeneration=?
NodeSelector nodeSelectorTerms=1
NodeSelectorTerm matchExpressions=1 matchFields=2
NodeSelectorRequirement key=1! operator=2! values=3
TopologySelectorTerm matchLabelExpressions=1
TopologySelectorLabelRequirement key=1! values=2
Affinity nodeAffinity=1* podAffinity=2* podAntiAffinity=3*
PodAffinity requiredDuringSchedulingIgnoredDuringExecution=1
  preferredDuringSchedulingIgnoredDuringExecution=2
PodAntiAffinity requiredDuringSchedulingIgnoredDuringExecution=1
  preferredDuringSchedulingIgnoredDuringExecution=2
WeightedPodAffinityTerm weight=1! podAffinityTerm=2
PodAffinityTerm labelSelector=1* namespaces=2 topologyKey=3! namespaceSelector=4*
  matchLabelKeys=5 mismatchLabelKeys=6
NodeAffinity requiredDuringSchedulingIgnoredDuringExecution=1*
  preferredDuringSchedulingIgnoredDuringExecution=2
PreferredSchedulingTerm weight=1! preference=2
Taint key=1! value=2 effect=3! timeAdded=4*
Toleration key=1 operator=2 value=3 effect=4 tolerationSeconds=5*
PodReadinessGate conditionType=1!
PodSpec volumes=1 containers=2 restartPolicy=3 terminationGracePeriodSeconds=4*
  activeDeadlineSeconds=5* dnsPolicy=6 nodeSelector=7 serviceAccountName=8 serviceAccount=9
  nodeName=10 hostNetwork=11 hostPID=12 hostIPC=13 securityContext=14* imagePullSecrets=15
  hostname=16 subdomain=17 affinity=18* schedulerName=19 initContainers=20
  automountServiceAccountToken=21* tolerations=22 hostAliases=23 priorityClassName=24
  priority=25* dnsConfig=26* shareProcessNamespace=27* readinessGates=28 runtimeClassName=29*
  enableServiceLinks=30* preemptionPolicy=31* overhead=32 topologySpreadConstraints=33
  ephemeralContainers=34 setHostnameAsFQDN=35* os=36* hostUsers=37* schedulingGates=38
  resourceClaims=39
  resources=40* hostnameOverride=41* schedulingGroup=?
PodResourceClaim name=1! resourceClaimName=3* resourceClaimTemplateName=4*
PodResourceClaimStatus name=1! resourceClaimName=2*
PodOS name=1!
PodSchedulingGate name=1!
TopologySpreadConstraint maxSkew=1! topologyKey=2! whenUnsatisfiable=3! labelSelector=4*
  minDomains=5* nodeAffinityPolicy=6* nodeTaintsPolicy=7* matchLabelKeys=8
HostAlias ip=1! hostnames=2
PodSecurityContext seLinuxOptions=1* runAsUser=2* runAsNonRoot=3* supplementalGroups=4
  fsGroup=5* runAsGroup=6* sysctls=7 windowsOptions=8* fsGroupChangePolicy=9*
  seccompProfile=10*
  appArmorProfile=11* supplementalGroupsPolicy=12* seLinuxChangePolicy=13*
SeccompProfile type=1! localhostProfile=2*
PodDNSConfig nameservers=1 searches=2 options=3
PodDNSConfigOption name=1 value=2*
PodIP ip=1
HostIP ip=1
EphemeralContainerCommon name=1! image=2 command=3 args=4 workingDir=5 ports=6 env=7
  resources=8 volumeMounts=9 livenessProbe=10* readinessProbe=11* lifecycle=12*
  terminationMessagePath=13 imagePullPolicy=14 securityContext=15* stdin=16 stdinOnce=17
  tty=18 envFrom=19 terminationMessagePolicy=20 volumeDevices=21 startupProbe=22*
  resizePolicy=23 restartPolicy=24*
  restartPolicyRules=?
EphemeralContainer @EphemeralContainerCommon=1 targetContainerName=2
PodStatus phase=1 conditions=2 message=3 reason=4 hostIP=5 podIP=6 startTime=7*
  containerStatuses=8 qosClass=9 initContainerStatuses=10 nominatedNodeName=11 podIPs=12
  ephemeralContainerStatuses=13 resize=14 resourceClaimStatuses=15 hostIPs=16
  allocatedResources=? extendedResourceClaimStatus=? nodeAllocatableResourceClaimStatuses=?
  observedGeneration=? resources=?
Pod metadata=1 spec=2 status=3
PodList metadata=1 items=2
PodTemplateSpec metadata=1 spec=2
PodTemplate metadata=1 template=2
PodTemplateList metadata=1 items=2
ReplicationControllerSpec replicas=1* selector=2 template=3* minReadySeconds=4
ReplicationControllerStatus replicas=1! fullyLabeledReplicas=2 observedGeneration=3
  readyReplicas=4 availableReplicas=5 conditions=6
ReplicationControllerCondition type=1! status=2! lastTransitionTime=3 reason=4 message=5
ReplicationController metadata=1 spec=2 status=3
ReplicationControllerList metadata=1 items=2
SessionAffinityConfig clientIP=1*
ClientIPConfig timeoutSeconds=1*
ServiceStatus loadBalancer=1 conditions=2
LoadBalancerStatus ingress=1
LoadBalancerIngress ip=1 hostname=2 ipMode=3* ports=4
ServiceSpec ports=1 selector=2 clusterIP=3 type=4 externalIPs=5 sessionAffinity=7
  loadBalancerIP=8 loadBalancerSourceRanges=9 externalName=10 externalTrafficPolicy=11
  healthCheckNodePort=12 publishNotReadyAddresses=13 sessionAffinityConfig=14*
  ipFamilyPolicy=17* clusterIPs=18 ipFamilies=19 allocateLoadBalancerNodePorts=20*
  loadBalancerClass=21* internalTrafficPolicy=22*
  trafficDistribution=23*
ServicePort name=1 protocol=2 port=3! targetPort=4 nodePort=5 appProtocol=6*
Service metadata=1 spec=2 status=3
ServiceList metadata=1 items=2
ServiceAccount metadata=1 secrets=2 imagePullSecrets=3 automountServiceAccountToken=4*
ServiceAccountList metadata=1 items=2
Endpoints metadata=1 subsets=2
EndpointSubset addresses=1 notReadyAddresses=2 ports=3
EndpointAddress ip=1! targetRef=2* hostname=3 nodeName=4*
EndpointPort name=1 port=2! protocol=3 appProtocol=4*
EndpointsList metadata=1 items=2
NodeSpec podCIDR=1 externalID=2 providerID=3 unschedulable=4 taints=5 configSource=6*
  podCIDRs=7
NodeConfigSource configMap=2*
ConfigMapNodeConfigSource namespace=1! name=2! uid=3 resourceVersion=4 kubeletConfigKey=5!
DaemonEndpoint Port=1!
NodeDaemonEndpoints kubeletEndpoint=1
NodeSystemInfo machineID=1! systemUUID=2! bootID=3! kernelVersion=4! osImage=5!
  containerRuntimeVersion=6! kubeletVersion=7! kubeProxyVersion=8! operatingSystem=9!
  architecture=10!
  swap=?
NodeConfigStatus assigned=1* active=2* lastKnownGood=3* error=4
NodeStatus capacity=1 allocatable=2 phase=3 conditions=4 addresses=5 daemonEndpoints=6
  nodeInfo=7 images=8 volumesInUse=9 volumesAttached=10 config=11*
  declaredFeatures=? features=13* runtimeHandlers=12
NodeFeatures supplementalGroupsPolicy=1*
NodeRuntimeHandler name=1! features=2*
NodeRuntimeHandlerFeatures recursiveReadOnlyMounts=1* userNamespaces=2*
AttachedVolume name=1! devicePath=2!
AvoidPods preferAvoidPods=1
PreferAvoidPodsEntry podSignature=1 evictionTime=2 reason=3 message=4
PodSignature podController=1*
ContainerImage names=1 sizeBytes=2
NodeCondition type=1! status=2! lastHeartbeatTime=3 lastTransitionTime=4 reason=5 message=6
NodeAddress type=1! address=2!
Node metadata=1 spec=2 status=3
NodeList metadata=1 items=2
NamespaceSpec finalizers=1
NamespaceStatus phase=1 conditions=2
NamespaceCondition type=1! status=2! lastTransitionTime=4 reason=5 message=6
Namespace metadata=1 spec=2 status=3
NamespaceList metadata=1 items=2
Binding metadata=1 target=2
ObjectReference kind=1 namespace=2 name=3 uid=4 apiVersion=5 resourceVersion=6 fieldPath=7
LocalObjectReference name=1
TypedLocalObjectReference apiGroup=1* kind=2! name=3!
EventSource component=1 host=2
Event metadata=1 involvedObject=2 reason=3 message=4 source=5 firstTimestamp=6
  lastTimestamp=7 count=8 type=9 eventTime=10 series=11* action=12 related=13*
  reportingComponent=14! reportingInstance=15!
EventSeries count=1 lastObservedTime=2
EventList metadata=1 items=2
LimitRangeItem type=1! max=2 min=3 default=4 defaultRequest=5 maxLimitRequestRatio=6
LimitRangeSpec limits=1
LimitRange metadata=1 spec=2
LimitRangeList metadata=1 items=2
ResourceQuotaSpec hard=1 scopes=2 scopeSelector=3*
ScopeSelector matchExpressions=1
ScopedResourceSelectorRequirement scopeName=1! operator=2! values=3
ResourceQuotaStatus hard=1 used=2
ResourceQuota metadata=1 spec=2 status=3
ResourceQuotaList metadata=1 items=2
Secret metadata=1 data=2 type=3 stringData=4 immutable=5*
SecretList metadata=1 items=2
ComponentCondition type=1! status=2! message=3 error=4
ComponentStatus metadata=1 conditions=2
ComponentStatusList metadata=1 items=2
DownwardAPIVolumeSource items=1 defaultMode=2*
DownwardAPIVolumeFile path=1! fieldRef=2* resourceFieldRef=3* mode=4*
DownwardAPIProjection items=1
SecurityContext capabilities=1* privileged=2* seLinuxOptions=3* runAsUser=4* runAsNonRoot=5*
  readOnlyRootFilesystem=6* allowPrivilegeEscalation=7* runAsGroup=8* procMount=9*
  windowsOptions=10* seccompProfile=11*
  appArmorProfile=12*
SELinuxOptions user=1 role=2 type=3 level=4
WindowsSecurityContextOptions gmsaCredentialSpecName=1* gmsaCredentialSpec=2*
  runAsUserName=3* hostProcess=4*
Sysctl name=1! value=2!
PortStatus port=1! protocol=2! error=3*
ContainerRestartRule action=1 exitCodes=2*
ContainerRestartRuleOnExitCodes operator=1 values=2
FileKeySelector volumeName=1! path=2! key=3! optional=4*
AppArmorProfile type=1! localhostProfile=2*
""",
    # k8s.io/api/apps/v1/types.go
    "io.k8s.api.apps.v1.": """
StatefulSet metadata=1 spec=2 status=3
StatefulSetUpdateStrategy type=1 rollingUpdate=2*
RollingUpdateStatefulSetStrategy partition=1* maxUnavailable=2*
StatefulSetPersistentVolumeClaimRetentionPolicy whenDeleted=1 whenScaled=2
StatefulSetOrdinals start=1!
StatefulSetSpec replicas=1* selector=2* template=3 volumeClaimTemplates=4 serviceName=5!
  podManagementPolicy=6 updateStrategy=7 revisionHistoryLimit=8* minReadySeconds=9
  persistentVolumeClaimRetentionPolicy=10* ordinals=11*
StatefulSetStatus observedGeneration=1 replicas=2! readyReplicas=3 currentReplicas=4
  updatedReplicas=5 currentRevision=6 updateRevision=7 collisionCount=9* conditions=10
  availableReplicas=11!
StatefulSetCondition type=1! status=2! lastTransitionTime=3 reason=4 message=5
StatefulSetList metadata=1 items=2
Deployment metadata=1 spec=2 status=3
DeploymentSpec replicas=1* selector=2* template=3 strategy=4 minReadySeconds=5
  revisionHistoryLimit=6* paused=7 progressDeadlineSeconds=9* podReplacementPolicy=10*
DeploymentStrategy type=1 rollingUpdate=2*
RollingUpdateDeployment maxUnavailable=1* maxSurge=2*
DeploymentStatus observedGeneration=1 replicas=2 updatedReplicas=3 availableReplicas=4
  unavailableReplicas=5 conditions=6 readyReplicas=7 collisionCount=8* terminatingReplicas=9*
DeploymentCondition type=1! status=2! reason=4 message=5 lastUpdateTime=6
  lastTransitionTime=7
DeploymentList metadata=1 items=2
DaemonSetUpdateStrategy type=1 rollingUpdate=2*
RollingUpdateDaemonSet maxUnavailable=1* maxSurge=2*
DaemonSetSpec selector=1* template=2 updateStrategy=3 minReadySeconds=4
  revisionHistoryLimit=6*
DaemonSetStatus currentNumberScheduled=1! numberMisscheduled=2! desiredNumberScheduled=3!
  numberReady=4! observedGeneration=5 updatedNumberScheduled=6 numberAvailable=7
  numberUnavailable=8 collisionCount=9* conditions=10
DaemonSetCondition type=1! status=2! lastTransitionTime=3 reason=4 message=5
DaemonSet metadata=1 spec=2 status=3
DaemonSetList metadata=1 items=2
ReplicaSet metadata=1 spec=2 status=3
ReplicaSetList metadata=1 items=2
ReplicaSetSpec replicas=1* selector=2* template=3 minReadySeconds=4
ReplicaSetStatus replicas=1! fullyLabeledReplicas=2 observedGeneration=3 readyReplicas=4
  availableReplicas=5 conditions=6 terminatingReplicas=7*
ReplicaSetCondition type=1! status=2! lastTransitionTime=3 reason=4 message=5
ControllerRevision metadata=1 data=2 revision=3!
ControllerRevisionList metadata=1 items=2
""",
    # k8s.io/api/batch/v1/types.go
    "io.k8s.api.batch.v1.": """
Job metadata=1 spec=2 status=3
JobList metadata=1 items=2
PodFailurePolicyOnExitCodesRequirement containerName=1* operator=2! values=3
PodFailurePolicyOnPodConditionsPattern type=1! status=2!
PodFailurePolicyRule action=1! onExitCodes=2* onPodConditions=3
PodFailurePolicy rules=1
SuccessPolicy rules=1
SuccessPolicyRule succeededIndexes=1* succeededCount=2*
JobSpec parallelism=1* completions=2* activeDeadlineSeconds=3* selector=4* manualSelector=5*
  template=6 backoffLimit=7* ttlSecondsAfterFinished=8* completionMode=9* suspend=10*
  podFailurePolicy=11* backoffLimitPerIndex=12* maxFailedIndexes=13*
  podReplacementPolicy=14* managedBy=15* successPolicy=16*
JobStatus conditions=1 startTime=2* completionTime=3* active=4 succeeded=5 failed=6
  completedIndexes=7 uncountedTerminatedPods=8* ready=9* failedIndexes=10* terminating=11*
UncountedTerminatedPods succeeded=1 failed=2
JobCondition type=1! status=2! lastProbeTime=3 lastTransitionTime=4 reason=5 message=6
JobTemplateSpec metadata=1 spec=2
CronJob metadata=1 spec=2 status=3
CronJobList metadata=1 items=2
CronJobSpec schedule=1! startingDeadlineSeconds=2* concurrencyPolicy=3 suspend=4*
  jobTemplate=5 successfulJobsHistoryLimit=6* failedJobsHistoryLimit=7* timeZone=8*
CronJobStatus active=1 lastScheduleTime=4* lastSuccessfulTime=5*
""",
    # k8s.io/api/rbac/v1/types.go
    "io.k8s.api.rbac.v1.": """
PolicyRule verbs=1 apiGroups=2 resources=3 resourceNames=4 nonResourceURLs=5
Subject kind=1! apiGroup=2 name=3! namespace=4
RoleRef apiGroup=1! kind=2! name=3!
Role metadata=1 rules=2
RoleBinding metadata=1 subjects=2 roleRef=3
RoleBindingList metadata=1 items=2
RoleList metadata=1 items=2
ClusterRole metadata=1 rules=2 aggregationRule=3*
AggregationRule clusterRoleSelectors=1
ClusterRoleBinding metadata=1 subjects=2 roleRef=3
ClusterRoleBindingList metadata=1 items=2
ClusterRoleList metadata=1 items=2
""",
    # k8s.io/api/networking/v1/types.go
    "io.k8s.api.networking.v1.": """
NetworkPolicy metadata=1 spec=2
NetworkPolicySpec podSelector=1 ingress=2 egress=3 policyTypes=4
NetworkPolicyIngressRule ports=1 from=2
NetworkPolicyEgressRule ports=1 to=2
NetworkPolicyPort protocol=1* port=2* endPort=3*
IPBlock cidr=1! except=2
NetworkPolicyPeer podSelector=1* namespaceSelector=2* ipBlock=3*
NetworkPolicyList metadata=1 items=2
Ingress metadata=1 spec=2 status=3
IngressList metadata=1 items=2
IngressSpec defaultBackend=1* tls=2 rules=3 ingressClassName=4*
IngressTLS hosts=1 secretName=2
IngressStatus loadBalancer=1
IngressLoadBalancerStatus ingress=1
IngressLoadBalancerIngress ip=1 hostname=2 ports=4
IngressPortStatus port=1! protocol=2! error=3*
IngressRule host=1 @IngressRuleValue=2
IngressRuleValue http=1*
HTTPIngressRuleValue paths=1
HTTPIngressPath path=1 backend=2 pathType=3*
IngressBackend resource=3* service=4*
IngressServiceBackend name=1! port=2
ServiceBackendPort name=1 number=2
IngressClass metadata=1 spec=2
IngressClassSpec controller=1 parameters=2*
IngressClassParametersReference apiGroup=1* kind=2! name=3! scope=4* namespace=5*
IngressClassList metadata=1 items=2
IPAddress metadata=1 spec=2
IPAddressSpec parentRef=1*
ParentReference group=1 resource=2 namespace=3 name=4
IPAddressList metadata=1 items=2
ServiceCIDR metadata=1 spec=2 status=3
ServiceCIDRSpec cidrs=1
ServiceCIDRStatus conditions=1
ServiceCIDRList metadata=1 items=2
""",
    # k8s.io/api/policy/v1/types.go
    "io.k8s.api.policy.v1.": """
PodDisruptionBudgetSpec minAvailable=1* selector=2* maxUnavailable=3*
  unhealthyPodEvictionPolicy=4*
PodDisruptionBudgetStatus observedGeneration=1 disruptedPods=2 disruptionsAllowed=3!
  currentHealthy=4! desiredHealthy=5! expectedPods=6! conditions=7
PodDisruptionBudget metadata=1 spec=2 status=3
PodDisruptionBudgetList metadata=1 items=2
Eviction metadata=1 deleteOptions=2*
""",
    # k8s.io/api/scheduling/v1/types.go
    "io.k8s.api.scheduling.v1.": """
PriorityClass metadata=1 value=2! globalDefault=3 description=4 preemptionPolicy=5*
PriorityClassList metadata=1 items=2
""",
    # k8s.io/api/coordination/v1/types.go (LeaseSpec strategy and preferredHolder: kubectl
    # v1.32's compiled descriptors)
    "io.k8s.api.coordination.v1.": """
Lease metadata=1 spec=2
LeaseSpec holderIdentity=1* leaseDurationSeconds=2* acquireTime=3* renewTime=4*
  leaseTransitions=5* strategy=6* preferredHolder=7*
LeaseList metadata=1 items=2
""",
    # k8s.io/api/authentication/v1/types.go
    "io.k8s.api.authentication.v1.": """
TokenReview metadata=1 spec=2 status=3
TokenReviewSpec token=1 audiences=2
TokenReviewStatus authenticated=1 user=2 error=3 audiences=4
UserInfo username=1 uid=2 groups=3 extra=4
TokenRequest metadata=1 spec=2 status=3
TokenRequestSpec audiences=1 boundObjectRef=3* expirationSeconds=4*
TokenRequestStatus token=1! expirationTimestamp=2!
BoundObjectReference kind=1 apiVersion=2 name=3 uid=4
SelfSubjectReview metadata=1 status=2
SelfSubjectReviewStatus userInfo=1
""",
    # k8s.io/api/authorization/v1/types.go
    "io.k8s.api.authorization.v1.": """
SubjectAccessReview metadata=1 spec=2 status=3
SelfSubjectAccessReview metadata=1 spec=2 status=3
LocalSubjectAccessReview metadata=1 spec=2 status=3
ResourceAttributes namespace=1 verb=2 group=3 version=4 resource=5 subresource=6 name=7
  fieldSelector=8* labelSelector=9*
LabelSelectorAttributes rawSelector=1 requirements=2
FieldSelectorAttributes rawSelector=1 requirements=2
NonResourceAttributes path=1 verb=2
SubjectAccessReviewSpec resourceAttributes=1* nonResourceAttributes=2* user=3 groups=4
  extra=5 uid=6 authorizationOptions=7*
SelfSubjectAccessReviewSpec resourceAttributes=1* nonResourceAttributes=2*
  authorizationOptions=3*
SubjectAccessReviewStatus allowed=1! reason=2 evaluationError=3 denied=4
  conditionalDecision=5*
SelfSubjectRulesReview metadata=1 spec=2 status=3
SelfSubjectRulesReviewSpec namespace=1
SubjectRulesReviewStatus resourceRules=1 nonResourceRules=2 incomplete=3! evaluationError=4
ResourceRule verbs=1 apiGroups=2 resources=3 resourceNames=4
NonResourceRule verbs=1 nonResourceURLs=2
""",
    # k8s.io/api/autoscaling/v1/types.go
    "io.k8s.api.autoscaling.v1.": """
CrossVersionObjectReference kind=1! name=2! apiVersion=3
HorizontalPodAutoscalerSpec scaleTargetRef=1 minReplicas=2* maxReplicas=3!
  targetCPUUtilizationPercentage=4*
HorizontalPodAutoscalerStatus observedGeneration=1* lastScaleTime=2* currentReplicas=3!
  desiredReplicas=4! currentCPUUtilizationPercentage=5*
HorizontalPodAutoscaler metadata=1 spec=2 status=3
HorizontalPodAutoscalerList metadata=1 items=2
Scale metadata=1 spec=2 status=3
ScaleSpec replicas=1
ScaleStatus replicas=1! selector=2
""",
    # k8s.io/api/autoscaling/v2/types.go
    "io.k8s.api.autoscaling.v2.": """
HorizontalPodAutoscaler metadata=1 spec=2 status=3
HorizontalPodAutoscalerSpec scaleTargetRef=1 minReplicas=2* maxReplicas=3! metrics=4
  behavior=5*
CrossVersionObjectReference kind=1! name=2! apiVersion=3
MetricSpec type=1! object=2* pods=3* resource=4* external=5* containerResource=7*
HorizontalPodAutoscalerBehavior scaleUp=1* scaleDown=2*
HPAScalingRules selectPolicy=1* policies=2 stabilizationWindowSeconds=3* tolerance=?
HPAScalingPolicy type=1! value=2! periodSeconds=3!
ObjectMetricSource describedObject=1 target=2 metric=3
PodsMetricSource metric=1 target=2
ResourceMetricSource name=1! target=2
ContainerResourceMetricSource name=1! target=2 container=3!
ExternalMetricSource metric=1 target=2
MetricIdentifier name=1! selector=2*
MetricTarget type=1! value=2* averageValue=3* averageUtilization=4*
HorizontalPodAutoscalerStatus observedGeneration=1* lastScaleTime=2* currentReplicas=3
  desiredReplicas=4! currentMetrics=5 conditions=6
HorizontalPodAutoscalerCondition type=1! status=2! lastTransitionTime=3 reason=4 message=5
MetricStatus type=1! object=2* pods=3* resource=4* external=5* containerResource=7*
ObjectMetricStatus metric=1 current=2 describedObject=3
PodsMetricStatus metric=1 current=2
ResourceMetricStatus name=1! current=2
ContainerResourceMetricStatus name=1! current=2 container=3!
ExternalMetricStatus metric=1 current=2
MetricValueStatus value=1* averageValue=2* averageUtilization=3*
HorizontalPodAutoscalerList metadata=1 items=2
""",
    # k8s.io/api/discovery/v1/types.go
    "io.k8s.api.discovery.v1.": """
EndpointSlice metadata=1 endpoints=2 ports=3 addressType=4!
Endpoint addresses=1 conditions=2 hostname=3* targetRef=4* deprecatedTopology=5 nodeName=6*
  zone=7* hints=8*
EndpointConditions ready=1* serving=2* terminating=3*
EndpointHints forZones=1 forNodes=?
ForZone name=1!
EndpointPort name=1* protocol=2* port=3* appProtocol=4*
EndpointSliceList metadata=1 items=2
""",
    # k8s.io/api/events/v1/types.go
    "io.k8s.api.events.v1.": """
Event metadata=1 eventTime=2! series=3* reportingController=4 reportingInstance=5 action=6
  reason=7 regarding=8 related=9* note=10 type=11 deprecatedSource=12
  deprecatedFirstTimestamp=13 deprecatedLastTimestamp=14 deprecatedCount=15
EventSeries count=1! lastObservedTime=2!
EventList metadata=1 items=2
""",
    # k8s.io/api/node/v1/types.go
    "io.k8s.api.node.v1.": """
RuntimeClass metadata=1 handler=2! overhead=3* scheduling=4*
Overhead podFixed=1
Scheduling nodeSelector=1 tolerations=2
RuntimeClassList metadata=1 items=2
""",
    # k8s.io/api/certificates/v1/types.go
    "io.k8s.api.certificates.v1.": """
CertificateSigningRequest metadata=1 spec=2 status=3
CertificateSigningRequestSpec request=1! username=2 uid=3 groups=4 usages=5 extra=6
  signerName=7! expirationSeconds=8*
CertificateSigningRequestStatus conditions=1 certificate=2
CertificateSigningRequestCondition type=1! reason=2 message=3 lastUpdateTime=4
  lastTransitionTime=5 status=6!
CertificateSigningRequestList metadata=1 items=2
""",
    # k8s.io/kube-aggregator/pkg/apis/apiregistration/v1/types.go
    "io.k8s.kube-aggregator.pkg.apis.apiregistration.v1.": """
APIServiceList metadata=1 items=2
ServiceReference namespace=1 name=2 port=3*
APIServiceSpec service=1* group=2 version=3 insecureSkipTLSVerify=4 caBundle=5
  groupPriorityMinimum=7! versionPriority=8!
APIServiceCondition type=1! status=2! lastTransitionTime=3 reason=4 message=5
APIServiceStatus conditions=1
APIService metadata=1 spec=2 status=3
""",
    # k8s.io/api/storage/v1/types.go
    "io.k8s.api.storage.v1.": """
StorageClass metadata=1 provisioner=2! parameters=3 reclaimPolicy=4* mountOptions=5
  allowVolumeExpansion=6* volumeBindingMode=7* allowedTopologies=8
StorageClassList metadata=1 items=2
VolumeAttachment metadata=1 spec=2 status=3
VolumeAttachmentList metadata=1 items=2
VolumeAttachmentSpec attacher=1! source=2 nodeName=3!
VolumeAttachmentSource persistentVolumeName=1* inlineVolumeSpec=2*
VolumeAttachmentStatus attached=1! attachmentMetadata=2 attachError=3* detachError=4*
VolumeError time=1 message=2 errorCode=3*
CSIDriver metadata=1 spec=2
CSIDriverList metadata=1 items=2
CSIDriverSpec attachRequired=1* podInfoOnMount=2* volumeLifecycleModes=3 storageCapacity=4*
  fsGroupPolicy=5* tokenRequests=6 requiresRepublish=7* seLinuxMount=8*
  nodeAllocatableUpdatePeriodSeconds=9* serviceAccountTokenInSecrets=10*
  preventPodSchedulingIfMissing=?
TokenRequest audience=1! expirationSeconds=2*
CSINode metadata=1 spec=2
CSINodeSpec drivers=1
CSINodeDriver name=1! nodeID=2! topologyKeys=3 allocatable=4*
VolumeNodeResources count=1*
CSINodeList metadata=1 items=2
CSIStorageCapacity metadata=1 nodeTopology=2* storageClassName=3! capacity=4*
  maximumVolumeSize=5*
CSIStorageCapacityList metadata=1 items=2
VolumeAttributesClass metadata=1 driverName=2! parameters=3
VolumeAttributesClassList metadata=1 items=2
""",
    # k8s.io/api/admissionregistration/v1/types.go (mutating admission policies: the numbers
    # of v1alpha1's, which v1 keeps, from kubectl v1.32's compiled descriptors)
    "io.k8s.api.admissionregistration.v1.": """
ValidatingAdmissionPolicy metadata=1 spec=2 status=3
ValidatingAdmissionPolicyStatus observedGeneration=1 typeChecking=2* conditions=3
TypeChecking expressionWarnings=1
ExpressionWarning fieldRef=2! warning=3!
ValidatingAdmissionPolicyList metadata=1 items=2
ValidatingAdmissionPolicySpec paramKind=1* matchConstraints=2* validations=3 failurePolicy=4*
  auditAnnotations=5 matchConditions=6 variables=7
ParamKind apiVersion=1 kind=2
Validation expression=1! message=2 reason=3* messageExpression=4
Variable name=1! expression=2!
AuditAnnotation key=1! valueExpression=2!
ValidatingAdmissionPolicyBinding metadata=1 spec=2
ValidatingAdmissionPolicyBindingList metadata=1 items=2
ValidatingAdmissionPolicyBindingSpec policyName=1 paramRef=2* matchResources=3*
  validationActions=4
ParamRef name=1 namespace=2 selector=3* parameterNotFoundAction=4*
MatchResources namespaceSelector=1* objectSelector=2* resourceRules=3 excludeResourceRules=4
  matchPolicy=7*
NamedRuleWithOperations resourceNames=1 @RuleWithOperations=2
Rule apiGroups=1 apiVersions=2 resources=3 scope=4*
ValidatingWebhookConfiguration metadata=1 webhooks=2
MutatingAdmissionPolicy metadata=1 spec=2
MutatingAdmissionPolicyList metadata=1 items=2
MutatingAdmissionPolicySpec paramKind=1* matchConstraints=2* variables=3 mutations=4
  failurePolicy=5* matchConditions=6 reinvocationPolicy=7
Mutation patchType=2! applyConfiguration=3* jsonPatch=4*
ApplyConfiguration expression=1
JSONPatch expression=1
MutatingAdmissionPolicyBinding metadata=1 spec=2
MutatingAdmissionPolicyBindingList metadata=1 items=2
MutatingAdmissionPolicyBindingSpec policyName=1 paramRef=2* matchResources=3*
ValidatingWebhookConfigurationList metadata=1 items=2
MutatingWebhookConfiguration metadata=1 webhooks=2
MutatingWebhookConfigurationList metadata=1 items=2
ValidatingWebhook name=1! clientConfig=2 rules=3 failurePolicy=4* namespaceSelector=5*
  sideEffects=6* timeoutSeconds=7* admissionReviewVersions=8 matchPolicy=9*
  objectSelector=10* matchConditions=11
MutatingWebhook name=1! clientConfig=2 rules=3 failurePolicy=4* namespaceSelector=5*
  sideEffects=6* timeoutSeconds=7* admissionReviewVersions=8 matchPolicy=9*
  reinvocationPolicy=10* objectSelector=11* matchConditions=12
RuleWithOperations operations=1 @Rule=2
WebhookClientConfig service=1* caBundle=2 url=3*
ServiceReference namespace=1! name=2! path=3* port=4*
MatchCondition name=1! expression=2!
""",
    # k8s.io/api/flowcontrol/v1/types.go
    "io.k8s.api.flowcontrol.v1.": """
FlowSchema metadata=1 spec=2 status=3
FlowSchemaList metadata=1 items=2
FlowSchemaSpec priorityLevelConfiguration=1 matchingPrecedence=2! distinguisherMethod=3*
  rules=4
FlowDistinguisherMethod type=1!
PriorityLevelConfigurationReference name=1!
PolicyRulesWithSubjects subjects=1 resourceRules=2 nonResourceRules=3
Subject kind=1! user=2* group=3* serviceAccount=4*
UserSubject name=1!
GroupSubject name=1!
ServiceAccountSubject namespace=1! name=2!
ResourcePolicyRule verbs=1 apiGroups=2 resources=3 clusterScope=4 namespaces=5
NonResourcePolicyRule verbs=1 nonResourceURLs=6
FlowSchemaStatus conditions=1
FlowSchemaCondition type=1 status=2 lastTransitionTime=3 reason=4 message=5
PriorityLevelConfiguration metadata=1 spec=2 status=3
PriorityLevelConfigurationList metadata=1 items=2
PriorityLevelConfigurationSpec type=1! limited=2* exempt=3*
LimitedPriorityLevelConfiguration nominalConcurrencyShares=1* limitResponse=2
  lendablePercent=3* borrowingLimitPercent=4*
ExemptPriorityLevelConfiguration nominalConcurrencyShares=1* lendablePercent=2*
LimitResponse type=1! queuing=2*
QueuingConfiguration queues=1! handSize=2! queueLengthLimit=3!
PriorityLevelConfigurationStatus conditions=1
PriorityLevelConfigurationCondition type=1 status=2 lastTransitionTime=3 reason=4 message=5
""",
}


def _parse(blocks: dict[str, str]) -> dict[str, dict[str, tuple[int, str]]]:
    table: dict[str, dict[str, tuple[int, str]]] = {}
    for prefix, text in blocks.items():
        name = ""
        for line in text.splitlines():
            words = line.split()
            if not words:
                continue
            if not line[0].isspace():
                name, words = prefix + words[0], words[1:]
                table[name] = {}
            for word in words:
                field, number = word.split("=")
                flag = number[-1] if number[-1] in "*!?" else ""
                table[name][field] = (int(number.rstrip("*!?") or 0), flag)
    return table


#: Schema name -> field name -> (field number, ``""``/``"*"``/``"!"`` as described above).
FIELDS = _parse(_BLOCKS)
